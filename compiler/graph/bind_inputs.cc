#include "compiler/graph/bind_inputs.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace lathe::graph {

absl::StatusOr<Graph> BindInputValues(
    Graph graph, const std::map<std::string, TensorData>& values) {
  if (values.empty()) return graph;
  for (const auto& [name, data] : values) {
    bool found = false;
    for (int v : graph.inputs()) found |= graph.value(v).name == name;
    if (!found) {
      return absl::InvalidArgumentError(
          absl::StrCat("the model has no input \"", name, "\""));
    }
  }
  Graph bound;
  bound.values() = std::move(graph.values());
  bound.nodes() = std::move(graph.nodes());
  for (int v : graph.inputs()) {
    Value& value = bound.value(v);
    auto it = values.find(value.name);
    if (it == values.end()) {
      bound.AddInput(v);
      continue;
    }
    if (it->second.dtype != value.type.dtype ||
        it->second.shape != value.type.shape ||
        it->second.size() != value.type.NumElements()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input \"", value.name, "\": expected ", TensorTypeText(value.type),
          ", got ", it->second.dtype.ToString(), "[",
          absl::StrJoin(it->second.shape, ","), "]"));
    }
    value.constant = it->second;
  }
  for (int v : graph.outputs()) bound.AddOutput(v);
  return bound;
}

}  // namespace lathe::graph
