// Dead-node elimination: drops the nodes none of whose outputs reaches a
// graph output, then compacts the graph (Graph::Compact renumbers values
// and nodes, dropping dead ones and constants no one reads).
// Tests: tests/compiler/graph/passes/eliminate_dead_nodes_test.cc.
#pragma once

#include "absl/status/status.h"
#include "compiler/graph/graph.h"

namespace lathe::graph {

absl::Status EliminateDeadNodes(Graph& graph, int* removed = nullptr);

}  // namespace lathe::graph
