#include "compiler/graph/passes/infer_types.h"

#include "gtest/gtest.h"
#include "tests/compiler/graph/graph_builder.h"

namespace lathe::graph {
namespace {

using testing::F32;
using testing::GraphBuilder;
using testing::Ints;

TEST(InferTypes, TypesEveryOutput) {
  GraphBuilder b;
  int x = b.Input("x", F32({2, 3}));
  int w = b.Input("w", F32({3, 4}));
  int y = b.Add1("MatMul", {x, w});
  int z = b.Add1("Relu", {y});
  b.Output(z);
  ASSERT_TRUE(InferTypes(b.graph).ok());
  EXPECT_TRUE(b.graph.value(z).typed);
  EXPECT_EQ(b.graph.value(z).type, F32({2, 4}));
}

// The chain PyTorch exports for x.view(x.size(0), -1): Shape, Gather,
// Unsqueeze, Concat, Reshape. It folds to a constant shape.
TEST(InferTypes, FoldsTheShapeChainIntoAConstantReshapeShape) {
  GraphBuilder b;
  int x = b.Input("x", F32({2, 3, 4}));
  int shape = b.Add1("Shape", {x});
  int zero = b.Const("zero", Ints({0}, {}));
  int batch = b.Add1("Gather", {shape, zero}, {{"axis", int64_t{0}}});
  int axes = b.Const("axes", Ints({0}));
  int batch1 = b.Add1("Unsqueeze", {batch, axes});
  int minus_one = b.Const("minus_one", Ints({-1}));
  int target = b.Add1("Concat", {batch1, minus_one}, {{"axis", int64_t{0}}});
  int cast = b.Add1("Cast", {target}, {{"to", int64_t{7}}});
  int y = b.Add1("Reshape", {x, cast});
  b.Output(y);
  ASSERT_TRUE(InferTypes(b.graph).ok());
  ASSERT_TRUE(b.graph.IsConstant(cast));
  EXPECT_EQ(b.graph.value(cast).constant->values, (std::vector<double>{2, -1}));
  EXPECT_EQ(b.graph.value(y).type, F32({2, 12}));
  int live = 0;
  for (const Node& node : b.graph.nodes()) live += node.dead ? 0 : 1;
  EXPECT_EQ(live, 1);  // the Reshape alone
}

TEST(InferTypes, FoldsConstantOfShape) {
  GraphBuilder b;
  int shape = b.Const("shape", Ints({2, 2}));
  int ones = b.Add1("ConstantOfShape", {shape}, {{"value", 1.0}});
  b.Output(ones);
  ASSERT_TRUE(InferTypes(b.graph).ok());
  ASSERT_TRUE(b.graph.IsConstant(ones));
  EXPECT_EQ(b.graph.value(ones).constant->values,
            (std::vector<double>{1, 1, 1, 1}));
}

TEST(InferTypes, NamesTheValueAndProducerItCannotType) {
  GraphBuilder b;
  int x = b.Input("x", F32({2, 3}));
  int w = b.Input("w", F32({4, 5}));
  int y = b.Add1("MatMul", {x, w});
  b.Output(y);
  absl::Status status = InferTypes(b.graph);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("MatMul_0_out0"), std::string::npos)
      << status;
  EXPECT_NE(status.message().find("node MatMul_0 (MatMul)"), std::string::npos)
      << status;
}

TEST(InferTypes, RefusesAnUntypedGraphInput) {
  GraphBuilder b;
  int x = b.Input("x", F32({2}));
  b.graph.value(x).typed = false;
  b.Output(b.Add1("Relu", {x}));
  absl::Status status = InferTypes(b.graph);
  EXPECT_NE(status.message().find("graph input x"), std::string::npos)
      << status;
}

}  // namespace
}  // namespace lathe::graph
