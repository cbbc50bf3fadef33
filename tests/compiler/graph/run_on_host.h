// Test support: a graph's live nodes run in order on the host (each
// operator's host evaluation), the reference that graph passes must keep.
// Tests: tests/compiler/graph/passes/fold_batch_norm_test.cc.
#pragma once

#include <map>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/graph/op_registry.h"
#include "gtest/gtest.h"

namespace lathe::graph::testing {

// The graph's outputs from `inputs` (one per graph input, in order); an
// evaluation error fails the test and returns no outputs.
inline std::vector<TensorData> RunOnHost(
    const Graph& graph, const std::vector<TensorData>& inputs) {
  std::map<int, TensorData> data;
  for (size_t i = 0; i < inputs.size() && i < graph.inputs().size(); ++i) {
    data[graph.inputs()[i]] = inputs[i];
  }
  for (const Node& node : graph.nodes()) {
    if (node.dead) continue;
    std::vector<const TensorData*> in;
    for (int v : node.inputs) {
      if (v == kNoValue || graph.IsConstant(v)) {
        in.push_back(v == kNoValue ? nullptr : &*graph.value(v).constant);
        continue;
      }
      auto it = data.find(v);
      if (it == data.end()) {
        ADD_FAILURE() << node.name << " reads " << graph.value(v).name
                      << ", which no earlier node or input gives";
        return {};
      }
      in.push_back(&it->second);
    }
    absl::StatusOr<std::vector<TensorData>> out = EvaluateNode(node, in);
    EXPECT_TRUE(out.ok()) << node.name << ": " << out.status();
    if (!out.ok()) return {};
    for (size_t o = 0; o < node.outputs.size() && o < out->size(); ++o) {
      data[node.outputs[o]] = (*out)[o];
    }
  }
  std::vector<TensorData> outputs;
  for (int v : graph.outputs()) {
    auto it = data.find(v);
    if (it == data.end()) {
      ADD_FAILURE() << "no node gives the output " << graph.value(v).name;
      return {};
    }
    outputs.push_back(it->second);
  }
  return outputs;
}

}  // namespace lathe::graph::testing
