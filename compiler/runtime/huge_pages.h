// Memory the kernel is asked to back with transparent huge pages (2 MiB),
// for data a model reads on every call: its constants and its arena.
//
// Why: a model's weights (MobileNetV2: 14 MB) do not stay in a core's L2
// between calls, so each call streams them from L3 or memory. With 4 KiB
// pages that stream takes a TLB miss per page, and the hardware prefetchers
// stop at every page boundary; within a 2 MiB page they run on. The
// measurement is in bench/README.md ("Why the code is as it is").
//
// - MapHugePageBlock(bytes) maps at least `bytes` of zeroed memory, aligned
//   to 2 MiB and advised MADV_HUGEPAGE when bytes >= kMinHugeBytes; smaller
//   blocks get ordinary pages (a huge page for a few kilobytes would cost
//   2 MiB of memory each).
// - The advice is advice: where the kernel has transparent huge pages off
//   (`never`) or not built in, the block is ordinary memory and works the
//   same.
// Private to the runtime and to api/ (api/huge_page_buffer.h wraps it).
// Tests: tests/compiler/runtime/huge_pages_test.cc.
#pragma once

#include <stddef.h>

namespace lathe::runtime {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;
inline constexpr size_t kMinHugeBytes = kHugePageBytes / 2;

// `n` rounded up to a multiple of `to` (> 0).
inline size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

struct HugePageBlock {
  char* data = nullptr;  // null: the mapping failed (or bytes was 0)
  size_t mapped = 0;     // the bytes to unmap (at least those asked for)
  bool advised = false;  // whether the kernel took the huge-page advice
};

// Async-signal-unsafe (mmap, munmap); thread-safe.
HugePageBlock MapHugePageBlock(size_t bytes);
// Unmaps a block from MapHugePageBlock; a null block is ignored.
void UnmapHugePageBlock(const HugePageBlock& block);

}  // namespace lathe::runtime
