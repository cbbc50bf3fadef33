// Test support: a graph's live nodes run in order on the host
// (compiler/graph/evaluate_graph.h), the reference that graph passes and
// models must keep; an error fails the test.
#pragma once

#include <vector>

#include "compiler/graph/evaluate_graph.h"
#include "gtest/gtest.h"

namespace lathe::graph::testing {

// The graph's outputs from `inputs` (one per graph input, in order); an
// evaluation error fails the test and returns no outputs.
inline std::vector<TensorData> RunOnHost(
    const Graph& graph, const std::vector<TensorData>& inputs) {
  absl::StatusOr<std::vector<TensorData>> outputs =
      EvaluateGraph(graph, inputs);
  EXPECT_TRUE(outputs.ok()) << outputs.status();
  return outputs.ok() ? *std::move(outputs) : std::vector<TensorData>{};
}

}  // namespace lathe::graph::testing
