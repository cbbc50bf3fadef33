// A whole graph evaluated on the host, node after node (each operator's
// host evaluation, op_registry.h): the reference a model's kernels are
// checked against where no other is at hand (the GPU check on a device,
// the tests of graph passes and of models).
// Tests: tests/compiler/graph/evaluate_graph_test.cc.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "compiler/graph/graph.h"
#include "compiler/interp/tensor_data.h"

namespace lathe::graph {

// The graph's outputs, in order, from `inputs` (one per graph input, in
// order); the live nodes run in their order in the graph. Errors
// (InvalidArgument): a wrong number of inputs; a node that reads a value no
// earlier node, input or constant gives, or whose evaluation fails (naming
// the node).
absl::StatusOr<std::vector<TensorData>> EvaluateGraph(
    const Graph& graph, const std::vector<TensorData>& inputs);

}  // namespace lathe::graph
