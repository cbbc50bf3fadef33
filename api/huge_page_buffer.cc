#include "api/huge_page_buffer.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace lathe::api {

absl::StatusOr<HugePageBuffer> HugePageBuffer::Allocate(size_t bytes) {
  if (bytes == 0) return HugePageBuffer();
  const runtime::HugePageBlock block = runtime::MapHugePageBlock(bytes);
  if (block.data == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot map ", bytes, " bytes"));
  }
  return HugePageBuffer(block.data, bytes, block.mapped, block.advised);
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
  runtime::UnmapHugePageBlock({data_, mapped_, advised_});
  data_ = nullptr;
  size_ = mapped_ = 0;
  advised_ = false;
}

}  // namespace lathe::api
