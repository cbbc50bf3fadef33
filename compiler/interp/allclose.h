// Element-wise comparison of a computed tensor with its expected value, as
// numpy.allclose does, with an error that says what differs and where.
// Tests: tests/compiler/interp/allclose_test.cc.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "compiler/interp/tensor_data.h"

namespace lathe {

// OK when every element satisfies |actual - expected| <= atol + rtol *
// |expected|. NaN matches NaN and an infinity matches the same infinity (both
// sides computed the same thing); anything else involving them mismatches.
// Errors (named by `what`, e.g. "output C of matmul"):
// - InvalidArgument when dtypes or shapes differ;
// - FailedPrecondition when values differ: the number of mismatches, the
//   first mismatching index with both values, and the largest absolute error.
absl::Status CheckAllClose(const TensorData& actual, const TensorData& expected,
                           double rtol, double atol, const std::string& what);

// The element test of CheckAllClose, for callers that compare in place and
// want its message only when something differs.
bool IsClose(double actual, double expected, double rtol, double atol);

}  // namespace lathe
