// The ONNX importer: an ONNX model file as a graph::Graph (compiler/graph),
// the only code that sees ONNX types.
//
// ImportOnnxModel reads the model (at most max_file_bytes), checks it
// (onnx::checker), refuses what Lathe cannot run before anything runs
// (opsets other than 11..17 of the default domain - an older one is read as
// 11 when all of the model's operators are the same at both -, other
// domains, operators
// outside graph/op_registry.h's list - naming the node, its op type and the
// opset -, element types other than float32, float64, int64, int32, int8,
// uint8 and bool, external data), gives the inputs static shapes (a symbolic
// dimension takes its value from input_shapes, or is refused naming the input
// and the dimension), runs ONNX shape inference, and converts the model to
// the opset-17 form of graph.h (node_conversion.h lists the
// normalizations). Every error is one line naming the file or the thing at
// fault; Unimplemented means "valid ONNX that Lathe does not support",
// InvalidArgument a malformed model or bad options.
// Tests: tests/compiler/frontend/onnx/onnx_importer_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/graph/graph.h"
#include "compiler/interp/tensor_data.h"

namespace lathe {

struct OnnxImportOptions {
  // --shape NAME=1,3,224,224
  std::map<std::string, std::vector<int64_t>> input_shapes;
  int64_t max_file_bytes = int64_t{2} << 30;
  // Graph inputs that become constants with this data (its dtype and shape
  // must fit the input's declaration): the shape, axes or pads operands
  // that ONNX test cases feed as inputs, which Lathe needs as constants to
  // give every value a static shape. They are no longer graph inputs.
  std::map<std::string, TensorData> constant_inputs;
};

absl::StatusOr<graph::Graph> ImportOnnxModel(
    const std::string& path, const OnnxImportOptions& options = {});

}  // namespace lathe
