#include "compiler/graph/bind_inputs.h"

#include <gtest/gtest.h>

#include "tests/compiler/graph/graph_builder.h"

namespace lathe::graph {
namespace {

using testing::F32;
using testing::GraphBuilder;
using testing::Ints;

// x, shape, y as inputs; the output reshapes x by shape.
Graph ThreeInputs() {
  GraphBuilder b;
  int x = b.Input("x", F32({6}));
  int shape = b.Input("shape", TensorType{DType::Int64(), {2}});
  b.Input("y", F32({2}));
  b.Output(b.Add1("Reshape", {x, shape}));
  return b.graph;
}

TEST(BindInputValues, TheBoundInputIsAConstantAndTheOthersKeepTheirOrder) {
  Graph graph = ThreeInputs();
  const int shape = graph.inputs()[1];
  absl::StatusOr<Graph> bound =
      BindInputValues(std::move(graph), {{"shape", Ints({3, 2})}});
  ASSERT_TRUE(bound.ok()) << bound.status();
  ASSERT_EQ(bound->inputs().size(), 2u);
  EXPECT_EQ(bound->value(bound->inputs()[0]).name, "x");
  EXPECT_EQ(bound->value(bound->inputs()[1]).name, "y");
  ASSERT_TRUE(bound->IsConstant(shape));
  EXPECT_EQ(bound->value(shape).constant->values, (std::vector<double>{3, 2}));
  EXPECT_EQ(bound->outputs().size(), 1u);
}

TEST(BindInputValues, RefusesAValueForNoInputOrOfAnotherTypeNamingIt) {
  absl::StatusOr<Graph> bound =
      BindInputValues(ThreeInputs(), {{"z", Ints({3, 2})}});
  ASSERT_FALSE(bound.ok());
  EXPECT_EQ(bound.status().message(), "the model has no input \"z\"");
  bound = BindInputValues(ThreeInputs(), {{"shape", Ints({3, 2, 1})}});
  ASSERT_FALSE(bound.ok());
  EXPECT_EQ(bound.status().message(),
            "input \"shape\": expected i64[2], got int64[3]");
  bound =
      BindInputValues(ThreeInputs(), {{"y", testing::Floats({2, 1}, {1, 2})}});
  ASSERT_FALSE(bound.ok());
  EXPECT_EQ(bound.status().message(),
            "input \"y\": expected f32[2], got float32[2,1]");
}

}  // namespace
}  // namespace lathe::graph
