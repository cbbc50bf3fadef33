#include "compiler/graph/passes/infer_types.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/graph/op_registry.h"

namespace lathe::graph {
namespace {

// Whether every present input is a constant (a node without inputs, such as
// Constant, counts).
bool AllInputsConstant(const Graph& graph, const Node& node) {
  for (int in : node.inputs) {
    if (in != kNoValue && !graph.IsConstant(in)) return false;
  }
  return true;
}

}  // namespace

absl::Status InferTypes(Graph& graph) {
  for (int in : graph.inputs()) {
    if (!graph.value(in).typed) {
      return absl::InvalidArgumentError(absl::StrCat(
          "graph input ", graph.value(in).name, " has no static type"));
    }
  }
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    if (graph.nodes()[i].dead) continue;
    const Node& node = graph.nodes()[i];
    absl::StatusOr<std::vector<TensorType>> types = InferNodeTypes(graph, node);
    if (!types.ok()) {
      const std::string value =
          node.outputs.empty() ? "(none)" : graph.value(node.outputs[0]).name;
      return absl::Status(
          types.status().code(),
          absl::StrCat("cannot infer the type of ", value, ", output of node ",
                       node.name, " (", node.op,
                       "): ", types.status().message()));
    }
    if (types->size() < node.outputs.size()) {
      return absl::InternalError(absl::StrCat(
          "node ", node.name, " (", node.op, ") infers ", types->size(),
          " types for ", node.outputs.size(), " outputs"));
    }
    bool small = true;
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      Value& value = graph.value(node.outputs[o]);
      value.type = (*types)[o];
      value.typed = true;
      if (value.type.NumElements() > kMaxFoldedElements) small = false;
    }
    // Shape and Size need only their input's type.
    const bool from_type = node.op == "Shape" || node.op == "Size";
    if (!small || (!from_type && !AllInputsConstant(graph, node))) continue;
    // Fold: evaluate on the host, the outputs become constants.
    std::vector<const TensorData*> inputs;
    TensorData type_only;
    if (from_type) {
      type_only.dtype = graph.value(node.inputs[0]).type.dtype;
      type_only.shape = graph.value(node.inputs[0]).type.shape;
      inputs.push_back(&type_only);
    } else {
      for (int in : node.inputs) {
        inputs.push_back(in == kNoValue ? nullptr : &*graph.value(in).constant);
      }
    }
    absl::StatusOr<std::vector<TensorData>> data = EvaluateNode(node, inputs);
    if (!data.ok()) return data.status();
    Node& mutable_node = graph.nodes()[i];
    for (size_t o = 0; o < mutable_node.outputs.size(); ++o) {
      Value& value = graph.value(mutable_node.outputs[o]);
      value.constant = std::move((*data)[o]);
      value.producer = kNoValue;
    }
    mutable_node.dead = true;
  }
  return absl::OkStatus();
}

}  // namespace lathe::graph
