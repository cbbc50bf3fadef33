// A block of zero-filled memory that the kernel is asked to back with
// transparent huge pages (2 MiB), for data a model reads on every call: its
// constants and its arena.
//
// Why: a model's weights (MobileNetV2: 14 MB) do not stay in a core's L2
// between calls, so each call streams them from L3 or memory. With 4 KiB
// pages that stream takes a TLB miss per page, and the hardware prefetchers
// stop at every page boundary; within a 2 MiB page they run on. The
// measurement is in bench/README.md ("Why the code is as it is").
//
// - Allocate(bytes) maps at least `bytes`, aligned to 2 MiB when it is at
//   least kMinHugeBytes (smaller blocks get ordinary pages: a huge page for
//   a few kilobytes would cost 2 MiB of memory each).
// - The advice is advice: where the kernel has transparent huge pages off
//   (`never`) or not built in, the block is ordinary memory and works the
//   same. With `always`, the kernel would back it with huge pages anyway.
// - Allocate(0) is an empty buffer (data() null).
// Errors: ResourceExhausted naming the size when the mapping fails.
// Tests: tests/api/huge_page_buffer_test.cc.
#pragma once

#include <cstddef>

#include "absl/status/statusor.h"

namespace lathe::api {

class HugePageBuffer {
 public:
  static constexpr size_t kHugePageBytes = size_t{2} << 20;
  static constexpr size_t kMinHugeBytes = kHugePageBytes / 2;

  static absl::StatusOr<HugePageBuffer> Allocate(size_t bytes);

  HugePageBuffer() = default;
  HugePageBuffer(HugePageBuffer&& other) noexcept;
  HugePageBuffer& operator=(HugePageBuffer&& other) noexcept;
  HugePageBuffer(const HugePageBuffer&) = delete;
  HugePageBuffer& operator=(const HugePageBuffer&) = delete;
  ~HugePageBuffer();

  char* data() const { return data_; }
  // The bytes asked for (the mapping may be larger).
  size_t size() const { return size_; }
  // Whether the kernel accepted the huge-page advice for this block.
  bool advised() const { return advised_; }

 private:
  HugePageBuffer(char* data, size_t size, size_t mapped, bool advised)
      : data_(data), size_(size), mapped_(mapped), advised_(advised) {}
  void Release();

  char* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;
  bool advised_ = false;
};

}  // namespace lathe::api
