#include "compiler/graph/evaluate_graph.h"

#include <gtest/gtest.h>

#include "tests/compiler/graph/graph_builder.h"

namespace lathe::graph {
namespace {

using testing::F32;
using testing::Floats;
using testing::GraphBuilder;

TEST(EvaluateGraph, RunsTheNodesInOrderWithConstantsAndMultipleOutputs) {
  // y = relu(x + c), z = y * y.
  GraphBuilder b;
  int x = b.Input("x", F32({3}));
  int y = b.Add1("Relu",
                 {b.Add1("Add", {x, b.Const("c", Floats({3}, {1, -5, 0}))})});
  b.Output(y);
  b.Output(b.Add1("Mul", {y, y}));
  absl::StatusOr<std::vector<TensorData>> out =
      EvaluateGraph(b.graph, {Floats({3}, {2, 3, -4})});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].values, (std::vector<double>{3, 0, 0}));
  EXPECT_EQ((*out)[1].values, (std::vector<double>{9, 0, 0}));
}

TEST(EvaluateGraph, RefusesAWrongInputCountAndNamesTheNodeThatFails) {
  GraphBuilder b;
  int x = b.Input("x", F32({3}));
  b.Output(b.Add1("Relu", {x}));
  absl::StatusOr<std::vector<TensorData>> out = EvaluateGraph(b.graph, {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "the graph takes 1 input(s), got 0");

  GraphBuilder bad;
  int a = bad.Input("a", F32({2}));
  bad.Output(bad.Add1("Add", {a, bad.Const("b", Floats({3}, {1, 2, 3}))}));
  out = EvaluateGraph(bad.graph, {Floats({2}, {1, 2})});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("node \"Add_0\" (Add)"),
            std::string::npos)
      << out.status();
}

}  // namespace
}  // namespace lathe::graph
