#include "compiler/graph/graph.h"

#include "gtest/gtest.h"
#include "tests/compiler/graph/graph_builder.h"

namespace lathe::graph {
namespace {

using testing::F32;
using testing::GraphBuilder;

TEST(Graph, TensorTypeText) {
  EXPECT_EQ(TensorTypeText(F32({1, 3, 224, 224})), "f32[1,3,224,224]");
  EXPECT_EQ(TensorTypeText(TensorType{DType::Int64(), {}}), "i64[]");
  EXPECT_EQ(TensorTypeText(TensorType{DType::Bool(), {2}}), "bool[2]");
  EXPECT_EQ(F32({2, 3, 4}).NumElements(), 24);
  EXPECT_EQ(F32({}).NumElements(), 1);
}

TEST(Graph, DuplicateValueNamesAreMadeUnique) {
  Graph g;
  EXPECT_EQ(g.AddValue("x", F32({1})), 0);
  EXPECT_EQ(g.AddValue("x", F32({1})), 1);
  EXPECT_EQ(g.value(1).name, "x_1");
}

TEST(Graph, ConsumersReplaceUsesAndVerify) {
  GraphBuilder b;
  int x = b.Input("x", F32({4}));
  int r = b.Add1("Relu", {x});
  int s = b.Add1("Add", {r, r});
  b.Output(s);
  EXPECT_TRUE(b.graph.Verify().ok());
  std::vector<std::vector<int>> consumers = b.graph.Consumers();
  EXPECT_EQ(consumers[x], std::vector<int>{0});
  EXPECT_EQ(consumers[r], std::vector<int>{1});  // once, though read twice
  b.graph.ReplaceUses(r, x);
  EXPECT_EQ(b.graph.nodes()[1].inputs, (std::vector<int>{x, x}));
}

TEST(Graph, VerifyNamesAReadBeforeItsProducer) {
  Graph g;
  int x = g.AddValue("x", F32({4}));
  g.AddInput(x);
  int later = g.AddValue("later", F32({4}));
  int y = g.AddValue("y", F32({4}));
  Node first{"Relu", "first", {}, {later}, {y}, false};
  Node second{"Relu", "second", {}, {x}, {later}, false};
  g.AddNode(first);
  g.AddNode(second);
  g.AddOutput(y);
  absl::Status status = g.Verify();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("first"), std::string::npos) << status;
  EXPECT_NE(status.message().find("later"), std::string::npos) << status;
}

TEST(Graph, CompactDropsDeadNodesAndUnreadValues) {
  GraphBuilder b;
  int x = b.Input("x", F32({4}));
  b.Const("unused", testing::Floats({1}, {1}));
  int dead = b.Add1("Neg", {x});
  int y = b.Add1("Relu", {x});
  b.Output(y);
  b.graph.nodes()[0].dead = true;
  (void)dead;
  b.graph.Compact();
  ASSERT_EQ(b.graph.nodes().size(), 1u);
  EXPECT_EQ(b.graph.nodes()[0].op, "Relu");
  ASSERT_EQ(b.graph.values().size(), 2u);
  EXPECT_EQ(b.graph.value(b.graph.outputs()[0]).name, "Relu_1_out0");
  EXPECT_EQ(b.graph.value(b.graph.outputs()[0]).producer, 0);
  EXPECT_TRUE(b.graph.Verify().ok());
}

}  // namespace
}  // namespace lathe::graph
