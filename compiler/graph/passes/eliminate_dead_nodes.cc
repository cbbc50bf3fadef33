#include "compiler/graph/passes/eliminate_dead_nodes.h"

#include <vector>

namespace lathe::graph {

absl::Status EliminateDeadNodes(Graph& graph, int* removed) {
  // Walk backwards from the outputs: a node is live when one of its outputs
  // is a graph output or read by a live node.
  std::vector<bool> needed(graph.values().size(), false);
  for (int v : graph.outputs()) needed[v] = true;
  int count = 0;
  for (size_t i = graph.nodes().size(); i-- > 0;) {
    Node& node = graph.nodes()[i];
    if (node.dead) continue;
    bool live = false;
    for (int out : node.outputs) {
      if (needed[out]) live = true;
    }
    if (!live) {
      node.dead = true;
      ++count;
      continue;
    }
    for (int in : node.inputs) {
      if (in != kNoValue) needed[in] = true;
    }
  }
  graph.Compact();
  if (removed != nullptr) *removed = count;
  return absl::OkStatus();
}

}  // namespace lathe::graph
