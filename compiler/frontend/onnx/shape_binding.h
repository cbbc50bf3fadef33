// Static shapes for an ONNX model (private to the importer), the second half
// of ImportOnnxModel before conversion:
// - BindInputShapes gives every graph input (other than initializers) a
//   static shape: a dimension with a value keeps it, a symbolic or missing
//   one takes the value from `input_shapes` (--shape NAME=1,3,224,224).
//   Errors: a symbolic dimension without a --shape for its input (naming the
//   input, the dimension's index and its symbol), a --shape naming no graph
//   input, a --shape of the wrong rank or contradicting a fixed dimension, a
//   negative dimension, an input of more than kMaxTensorElements elements.
// - BindConstantInputs makes graph inputs constants (initializers) with the
//   given data. Errors: a name that is no graph input (or already an
//   initializer), data whose dtype differs from the input's or whose shape
//   contradicts the input's declared dimensions.
// - InferModelShapes runs ONNX shape inference (with data propagation, so
//   Shape->Gather->Concat->Reshape chains get static shapes) and turns its
//   exceptions into an error naming the file.
// Tests: tests/compiler/frontend/onnx/onnx_importer_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/interp/tensor_data.h"
#include "onnx/onnx_pb.h"

namespace lathe::onnx_frontend {

absl::Status BindInputShapes(
    onnx::ModelProto& model,
    const std::map<std::string, std::vector<int64_t>>& input_shapes);

absl::Status BindConstantInputs(
    onnx::ModelProto& model,
    const std::map<std::string, TensorData>& constant_inputs);

absl::Status InferModelShapes(onnx::ModelProto& model, const std::string& path);

}  // namespace lathe::onnx_frontend
