// Buffers: the multi-dimensional arrays a program reads and writes.
//
// A buffer is immutable once built and identified by its pointer; primitives
// that change a buffer's shape or scope make a new one. Row-major, densely
// packed. The scope says where it lives: global (kernel arguments and heap
// intermediates), local (a thread's registers or stack), shared (a GPU block's
// shared memory).
// Tests: tests/compiler/ir/expr_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/dtype.h"

namespace lathe {

enum class BufferScope : uint8_t { kGlobal, kLocal, kShared };

const char* BufferScopeName(BufferScope scope);
absl::StatusOr<BufferScope> ParseBufferScope(const std::string& text);

struct Buffer {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  BufferScope scope = BufferScope::kGlobal;

  int64_t NumElements() const;
};

using BufferPtr = std::shared_ptr<const Buffer>;

BufferPtr MakeBuffer(std::string name, DType dtype, std::vector<int64_t> shape,
                     BufferScope scope = BufferScope::kGlobal);

}  // namespace lathe
