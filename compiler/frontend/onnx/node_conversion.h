// One ONNX node as graph::Node(s) in the opset-17 form (private to the
// importer). graph.h's contract for the result:
// - every attribute of the op's opset-17 schema that has a default is
//   present (the node's own opset's defaults apply first where they differ,
//   as Softmax's axis before opset 13);
// - inputs that older opsets gave as attributes are constant inputs:
//   Squeeze/Unsqueeze/ReduceSum `axes` and Split `split` before opset 13;
//   Dropout's `ratio` attribute before opset 12 is dropped (inference);
// - Softmax/LogSoftmax before opset 13 (coerced to 2-D at `axis`) keep their
//   node when `axis` is the last dimension (axis set to -1), and otherwise
//   become Flatten(axis) -> Softmax(axis=-1) -> Reshape(to the input shape);
// - Conv, ConvTranspose, MaxPool and AveragePool have kernel_shape (Conv and
//   ConvTranspose: from the weight's shape), strides, pads, dilations (not
//   AveragePool) and, for ConvTranspose, output_padding; auto_pad VALID or
//   SAME_UPPER/SAME_LOWER (not ConvTranspose) becomes explicit pads and
//   NOTSET when the input shape is static;
// - Transpose has perm (the reversed dimensions) when the input rank is
//   known;
// - Cast's `to` stays the ONNX element type code (1 float32, 7 int64, ...);
//   ConstantOfShape's tensor `value` becomes "value" (a float attribute) and
//   "to" (its ONNX element type code, as Cast's; default 0.0 and 1,
//   float32);
// - a Constant node becomes a constant value, not a node;
// - an absent optional input ("") is kNoValue, trailing ones are dropped;
//   trailing absent outputs are dropped;
// - node names are unique: an empty or repeated one gets a made-up name.
// Errors name the node, its op type and the opset.
// Tests: tests/compiler/frontend/onnx/node_conversion_test.cc.
#pragma once

#include "absl/status/status.h"
#include "compiler/frontend/onnx/graph_builder.h"
#include "onnx/onnx_pb.h"

namespace lathe::onnx_frontend {

absl::Status ConvertNode(const onnx::NodeProto& proto, GraphBuilder& builder);

}  // namespace lathe::onnx_frontend
