#include "compiler/graph/evaluate_graph.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/graph/op_registry.h"

namespace lathe::graph {

absl::StatusOr<std::vector<TensorData>> EvaluateGraph(
    const Graph& graph, const std::vector<TensorData>& inputs) {
  if (inputs.size() != graph.inputs().size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the graph takes ", graph.inputs().size(),
                     " input(s), got ", inputs.size()));
  }
  std::map<int, TensorData> data;
  for (size_t i = 0; i < inputs.size(); ++i) {
    data[graph.inputs()[i]] = inputs[i];
  }
  auto value_of = [&](int v) -> const TensorData* {
    if (v == kNoValue) return nullptr;
    if (graph.IsConstant(v)) return &*graph.value(v).constant;
    auto it = data.find(v);
    return it == data.end() ? nullptr : &it->second;
  };
  for (const Node& node : graph.nodes()) {
    if (node.dead) continue;
    std::vector<const TensorData*> in;
    for (int v : node.inputs) {
      const TensorData* value = value_of(v);
      if (v != kNoValue && value == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            "node \"", node.name, "\" reads \"", graph.value(v).name,
            "\", which no earlier node or input gives"));
      }
      in.push_back(value);
    }
    absl::StatusOr<std::vector<TensorData>> out = EvaluateNode(node, in);
    if (!out.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("node \"", node.name, "\" (", node.op,
                       "): ", out.status().message()));
    }
    for (size_t o = 0; o < node.outputs.size() && o < out->size(); ++o) {
      if (node.outputs[o] != kNoValue) {
        data[node.outputs[o]] = std::move((*out)[o]);
      }
    }
  }
  std::vector<TensorData> outputs;
  for (int v : graph.outputs()) {
    const TensorData* value = value_of(v);
    if (value == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "no node gives the output \"", graph.value(v).name, "\""));
    }
    outputs.push_back(*value);
  }
  return outputs;
}

}  // namespace lathe::graph
