// Conversion between ONNX TensorProto messages and Lathe's TensorData, for
// initializers, Constant nodes and tensor files (private to the importer:
// only compiler/frontend/onnx sees ONNX types).
//
// Contract:
// - Supported element types: float32, float64, int64, int32, int8, uint8 and
//   bool; any other is Unimplemented, naming the tensor and its type.
// - Sizes are bounded before any allocation: every dimension is >= 0, the
//   element count is at most kMaxTensorElements (no overflow on the way), and
//   the data present (raw_data or the typed field) must hold exactly that
//   many elements. Data stored outside the model (external data) is refused.
// - `what` names the tensor in every message ("initializer \"conv1.weight\"",
//   a file path, ...).
// Tests: tests/compiler/frontend/onnx/tensor_file_test.cc.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/interp/tensor_data.h"
#include "compiler/ir/dtype.h"
#include "onnx/onnx_pb.h"

namespace lathe::onnx_frontend {

// The largest tensor the importer converts (TensorData holds each element
// as a double, so this is 2 GiB of host memory).
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 28;

// The Lathe dtype of an ONNX element type (TensorProto::DataType); `what`
// names the tensor or value in the error.
absl::StatusOr<DType> DTypeFromOnnx(int32_t elem_type, const std::string& what);
// The ONNX element type of a Lathe dtype.
absl::StatusOr<int32_t> OnnxFromDType(DType dtype, const std::string& what);
// "FLOAT16", "STRING", ... for messages.
std::string OnnxTypeName(int32_t elem_type);

// The element count of `dims`, or an error when a dimension is negative or
// the count exceeds kMaxTensorElements.
absl::StatusOr<int64_t> BoundedElementCount(const std::vector<int64_t>& dims,
                                            const std::string& what);

// Checks the proto's type, external data and sizes as TensorFromProto does,
// without converting; returns the element count.
absl::StatusOr<int64_t> ValidateTensorProto(const onnx::TensorProto& proto,
                                            const std::string& what);
absl::StatusOr<TensorData> TensorFromProto(const onnx::TensorProto& proto,
                                           const std::string& what);
// Little-endian raw_data; the proto's name is `name`.
absl::StatusOr<onnx::TensorProto> TensorToProto(const TensorData& data,
                                                const std::string& name);

}  // namespace lathe::onnx_frontend
