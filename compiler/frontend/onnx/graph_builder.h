// Builds a graph::Graph from a checked, shape-inferred ONNX model (private
// to the importer): initializers become constants (also those listed as
// graph inputs), the remaining graph inputs become inputs with their bound
// static shapes, each node becomes one graph::Node (or a few, where
// node_conversion.h rewrites an older opset's form), and the graph outputs
// are the values named by the model's outputs.
//
// A value whose ONNX type is a tensor with a static shape is typed; one whose
// shape inference left a dimension unknown has Value::typed false (the
// graph's own type inference fills it). A value of an element type Lathe
// does not support is Unimplemented, naming the value.
// Tests: tests/compiler/frontend/onnx/onnx_importer_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/graph/graph.h"
#include "onnx/onnx_pb.h"

namespace lathe::onnx_frontend {

class GraphBuilder {
 public:
  GraphBuilder(const onnx::ModelProto& model, int64_t opset);

  absl::StatusOr<graph::Graph> Build();

  // For node conversion.
  int64_t opset() const { return opset_; }
  // The value an ONNX name denotes; "" is an absent optional (kNoValue).
  absl::StatusOr<int> Lookup(const std::string& onnx_name,
                             const std::string& node) const;
  // A value for an ONNX node output, typed from the model's value_info.
  absl::StatusOr<int> DefineOutput(const std::string& onnx_name);
  // Binds an ONNX name to an existing value (a Constant node's output).
  void Bind(const std::string& onnx_name, int value) {
    ids_[onnx_name] = value;
  }
  // A new untyped intermediate value, for nodes a rewrite adds.
  int NewValue(const std::string& base);
  int NewConstant(const std::string& base, TensorData data);
  int NewInt64Constant(const std::string& base,
                       const std::vector<int64_t>& values);
  // The static type of a value, if known.
  std::optional<graph::TensorType> StaticType(int value) const;
  // A node name not used before, from the ONNX one (or the op when empty).
  std::string UniqueNodeName(const std::string& name, const std::string& op);
  void Emit(graph::Node node) { graph_.AddNode(std::move(node)); }

 private:
  // The type of an ONNX name from inputs, outputs and value_info; typed
  // false when not static.
  absl::StatusOr<std::pair<graph::TensorType, bool>> TypeOf(
      const std::string& onnx_name) const;

  const onnx::ModelProto& model_;
  int64_t opset_;
  graph::Graph graph_;
  std::map<std::string, int> ids_;
  std::map<std::string, const onnx::TypeProto*> types_;
  std::set<std::string> node_names_;
};

}  // namespace lathe::onnx_frontend
