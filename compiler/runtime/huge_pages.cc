#include "compiler/runtime/huge_pages.h"

#include <stdint.h>
#include <sys/mman.h>

namespace lathe::runtime {

HugePageBlock MapHugePageBlock(size_t bytes) {
  HugePageBlock block;
  if (bytes == 0) return block;
  const bool huge = bytes >= kMinHugeBytes;
  const size_t page = huge ? kHugePageBytes : size_t{4096};
  const size_t length = RoundUp(bytes, page);
  if (length < bytes) return block;  // overflow
  // For a huge block, map one huge page more than needed and trim the ends
  // so that what is kept starts on a 2 MiB boundary.
  const size_t reserve = huge ? length + kHugePageBytes : length;
  if (reserve < length) return block;
  void* mapped = mmap(nullptr, reserve, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return block;
  char* start = static_cast<char*>(mapped);
  if (huge) {
    const auto address = reinterpret_cast<uintptr_t>(start);
    const size_t head = RoundUp(address, kHugePageBytes) - address;
    if (head > 0) munmap(start, head);
    const size_t tail = reserve - head - length;
    if (tail > 0) munmap(start + head + length, tail);
    start += head;
    block.advised = madvise(start, length, MADV_HUGEPAGE) == 0;
  }
  block.data = start;
  block.mapped = length;
  return block;
}

void UnmapHugePageBlock(const HugePageBlock& block) {
  if (block.data != nullptr) munmap(block.data, block.mapped);
}

}  // namespace lathe::runtime
