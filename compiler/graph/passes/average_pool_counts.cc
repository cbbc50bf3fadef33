#include "compiler/graph/passes/average_pool_counts.h"

#include <optional>

#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {

absl::Status AddAveragePoolCounts(Graph& graph, int* added) {
  int count = 0;
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const Node& node = graph.nodes()[i];
    if (node.dead || node.op != "AveragePool" || node.inputs.size() != 1) {
      continue;
    }
    std::optional<TensorData> counts =
        AveragePoolCounts(node, graph.value(node.inputs[0]).type.shape);
    if (!counts) continue;
    const int id =
        graph.AddConstant(node.name + "_window_counts", std::move(*counts));
    graph.nodes()[i].inputs.push_back(id);
    ++count;
  }
  if (added != nullptr) *added = count;
  return absl::OkStatus();
}

}  // namespace lathe::graph
