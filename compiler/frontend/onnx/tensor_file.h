// Tensors as ONNX TensorProto files (`.pb`), the layout of the ONNX backend
// test cases (test_data_set_0/input_0.pb, output_0.pb, ...): what
// `lathe run` reads as inputs and writes as outputs.
//
// ReadTensorFile reads one serialized TensorProto: the file must be a
// regular file of at most kMaxTensorFileBytes bytes holding a TensorProto of
// a supported dtype (float32, float64, int64, int32, int8, uint8, bool) whose
// data matches its dims; otherwise one error naming the file. `name`, when
// given, receives the tensor's name (often the graph input it feeds).
// WriteTensorFile writes `data` (raw_data, little-endian) atomically: on an
// error no file is left under `path`.
// Tests: tests/compiler/frontend/onnx/tensor_file_test.cc.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/interp/tensor_data.h"

namespace lathe {

inline constexpr int64_t kMaxTensorFileBytes = int64_t{2} << 30;

absl::StatusOr<TensorData> ReadTensorFile(const std::string& path,
                                          std::string* name = nullptr);
absl::Status WriteTensorFile(const std::string& path, const TensorData& data,
                             const std::string& name = "");

}  // namespace lathe
