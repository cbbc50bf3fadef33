// ONNX node attributes as graph::Attr values (private to the importer).
//
// ConvertAttribute maps FLOAT, INT, STRING, INTS and FLOATS to the Attr kinds
// of compiler/graph/graph.h; any other kind (tensors, graphs, string lists,
// types) is Unimplemented, naming the node, its op and the attribute.
// FillSchemaDefaults adds, for every attribute of the op's schema at `opset`
// that has a default and is absent from `attrs`, that default.
// Tests: tests/compiler/frontend/onnx/node_conversion_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/graph/graph.h"
#include "onnx/onnx_pb.h"

namespace lathe::onnx_frontend {

absl::StatusOr<graph::Attr> ConvertAttribute(const onnx::AttributeProto& proto,
                                             const std::string& node,
                                             const std::string& op);

void FillSchemaDefaults(const std::string& op, int64_t opset,
                        std::map<std::string, graph::Attr>& attrs);

}  // namespace lathe::onnx_frontend
