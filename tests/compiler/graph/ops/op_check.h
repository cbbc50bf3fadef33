// Test support for operator tests: one node's type inference and host
// evaluation on given inputs.
// Tests: tests/compiler/graph/ops/elementwise_test.cc.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/graph/op_registry.h"
#include "gtest/gtest.h"
#include "tests/compiler/graph/graph_builder.h"

namespace lathe::graph::testing {

struct OpRun {
  absl::StatusOr<std::vector<TensorType>> types;
  absl::StatusOr<std::vector<TensorData>> outputs;
};

// Builds a graph with one `op` node reading `inputs` (nullopt: absent);
// those listed in `constants` are graph constants, the others graph inputs.
// Returns the inferred types and (when inference succeeds) the evaluation.
inline OpRun RunOp(const std::string& op,
                   const std::vector<std::optional<TensorData>>& inputs,
                   std::map<std::string, Attr> attrs = {},
                   std::set<int> constants = {}, int num_outputs = 1) {
  GraphBuilder b;
  std::vector<int> ids;
  std::vector<const TensorData*> data;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      ids.push_back(kNoValue);
      data.push_back(nullptr);
      continue;
    }
    const std::string name = "in" + std::to_string(i);
    ids.push_back(
        constants.count(static_cast<int>(i))
            ? b.Const(name, *inputs[i])
            : b.Input(name, TensorType{inputs[i]->dtype, inputs[i]->shape}));
    data.push_back(&*inputs[i]);
  }
  b.Add(op, ids, std::move(attrs), num_outputs);
  OpRun run{InferNodeTypes(b.graph, b.graph.nodes()[0]),
            absl::InternalError("not evaluated")};
  if (run.types.ok()) run.outputs = EvaluateNode(b.graph.nodes()[0], data);
  return run;
}

// Checks one output's type and values (to 1e-6 relative).
inline void ExpectOutput(const OpRun& run, const TensorType& type,
                         const std::vector<double>& values, size_t index = 0) {
  ASSERT_TRUE(run.types.ok()) << run.types.status();
  ASSERT_GT(run.types->size(), index);
  EXPECT_EQ(TensorTypeText((*run.types)[index]), TensorTypeText(type));
  ASSERT_TRUE(run.outputs.ok()) << run.outputs.status();
  const TensorData& out = (*run.outputs)[index];
  EXPECT_EQ(out.shape, type.shape);
  EXPECT_EQ(out.dtype, type.dtype);
  ASSERT_EQ(out.values.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_NEAR(out.values[i], values[i], 1e-6 * (1 + std::abs(values[i])))
        << "element " << i;
  }
}

// Expects inference to fail with a message containing each of `parts`.
inline void ExpectRefused(const OpRun& run,
                          const std::vector<std::string>& parts) {
  ASSERT_FALSE(run.types.ok());
  for (const std::string& part : parts) {
    EXPECT_NE(run.types.status().message().find(part), std::string::npos)
        << run.types.status();
  }
}

}  // namespace lathe::graph::testing
