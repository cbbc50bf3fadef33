// Host-side tensor values for the interpreter, the reference evaluations and
// result checks.
//
// Elements are held as double whatever the dtype; every store rounds to the
// dtype (float32 values are exactly representable), so a TensorData of
// float32 holds exactly the floats a compiled kernel would. Row-major.
// Tests: tests/compiler/interp/tensor_data_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/buffer.h"
#include "compiler/ir/dtype.h"

namespace lathe {

struct TensorData {
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<double> values;

  TensorData() = default;
  TensorData(DType t, std::vector<int64_t> s);
  // Zero-filled, shaped like the buffer.
  static TensorData Like(const Buffer& buffer);
  int64_t size() const { return static_cast<int64_t>(values.size()); }
};

// Rounds a value to what the dtype can hold (float32: nearest float; integer
// types: truncation toward zero and wrap to the width, NaN and infinities
// become 0; bool: 0 or 1).
double RoundToDType(double value, DType dtype);

}  // namespace lathe
