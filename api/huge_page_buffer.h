// A block of zero-filled memory that the kernel is asked to back with
// transparent huge pages (2 MiB), for data a model reads on every call: its
// constants and its arena. An owning wrapper of the runtime's
// MapHugePageBlock (compiler/runtime/huge_pages.h, which says why and what
// the advice does).
//
// - Allocate(bytes) maps at least `bytes`, aligned to 2 MiB when it is at
//   least kMinHugeBytes (smaller blocks get ordinary pages).
// - Allocate(0) is an empty buffer (data() null).
// Errors: ResourceExhausted naming the size when the mapping fails.
// Tests: tests/api/huge_page_buffer_test.cc.
#pragma once

#include <cstddef>

#include "absl/status/statusor.h"
#include "compiler/runtime/huge_pages.h"

namespace lathe::api {

class HugePageBuffer {
 public:
  static constexpr size_t kHugePageBytes = runtime::kHugePageBytes;
  static constexpr size_t kMinHugeBytes = runtime::kMinHugeBytes;

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
