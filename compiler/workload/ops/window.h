// Sliding windows, shared by convolutions and pooling: the output length of a
// window sliding over a padded axis, and the padding stage.
//
// Private to compiler/workload/ops.
// Tests: tests/compiler/workload/ops_test.cc, reference_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/te/tensor.h"

namespace lathe::ops {

// How one spatial axis is slid over.
struct WindowAxis {
  const char* input_name;   // "H"
  const char* kernel_name;  // "R"
  int64_t input = 1;
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t pad = 0;  // on both sides
  int64_t dilation = 1;
};

// floor((input + 2*pad - dilation*(kernel-1) - 1) / stride) + 1, or an
// InvalidArgument error naming the operator and the axis when the dilated
// kernel does not fit in the padded input (no output at all).
absl::StatusOr<int64_t> WindowOutputLength(const std::string& op,
                                           const WindowAxis& axis);

// The stage "pad": x with `pad` elements of `pad_value` added on both sides
// of the axes h_axis and w_axis, computed with a select so that
// compute_inline can fold it into its consumer. Where the condition is false
// the select's load of x is out of bounds: evaluation must not perform the
// load of the arm it does not choose (as TVM's if_then_else).
te::Tensor PadSpatial(const te::Tensor& x, size_t h_axis, size_t w_axis,
                      int64_t pad, Expr pad_value,
                      std::vector<std::string> axis_names);

}  // namespace lathe::ops
