#include "api/huge_page_buffer.h"

#include <sys/mman.h>

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace lathe::api {
namespace {

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

absl::StatusOr<HugePageBuffer> HugePageBuffer::Allocate(size_t bytes) {
  if (bytes == 0) return HugePageBuffer();
  const bool huge = bytes >= kMinHugeBytes;
  const size_t page = huge ? kHugePageBytes : size_t{4096};
  const size_t length = RoundUp(bytes, page);
  if (length < bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot map ", bytes, " bytes"));
  }
  // For a huge block, map one huge page more than needed and trim the ends
  // so that what is kept starts on a 2 MiB boundary.
  const size_t reserve = huge ? length + kHugePageBytes : length;
  void* mapped = mmap(nullptr, reserve, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot map ", bytes, " bytes"));
  }
  char* start = static_cast<char*>(mapped);
  if (!huge) return HugePageBuffer(start, bytes, length, false);
  const auto address = reinterpret_cast<uintptr_t>(start);
  const size_t head = RoundUp(address, kHugePageBytes) - address;
  if (head > 0) munmap(start, head);
  const size_t tail = reserve - head - length;
  if (tail > 0) munmap(start + head + length, tail);
  start += head;
  const bool advised = madvise(start, length, MADV_HUGEPAGE) == 0;
  return HugePageBuffer(start, bytes, length, advised);
}

HugePageBuffer::HugePageBuffer(HugePageBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, 0)),
      advised_(std::exchange(other.advised_, false)) {}

HugePageBuffer& HugePageBuffer::operator=(HugePageBuffer&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
    advised_ = std::exchange(other.advised_, false);
  }
  return *this;
}

HugePageBuffer::~HugePageBuffer() { Release(); }

void HugePageBuffer::Release() {
  if (data_ != nullptr) munmap(data_, mapped_);
  data_ = nullptr;
  size_ = mapped_ = 0;
  advised_ = false;
}

}  // namespace lathe::api
