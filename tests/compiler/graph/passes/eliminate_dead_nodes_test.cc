#include "compiler/graph/passes/eliminate_dead_nodes.h"

#include "gtest/gtest.h"
#include "tests/compiler/graph/graph_builder.h"

namespace lathe::graph {
namespace {

using testing::F32;
using testing::GraphBuilder;

TEST(EliminateDeadNodes, DropsWhatReachesNoOutput) {
  GraphBuilder b;
  int x = b.Input("x", F32({4}));
  int unused = b.Add1("Exp", {x});
  b.Add1("Neg", {unused});  // a dead chain of two
  int y = b.Add1("Relu", {x});
  b.Output(y);
  int removed = 0;
  ASSERT_TRUE(EliminateDeadNodes(b.graph, &removed).ok());
  EXPECT_EQ(removed, 2);
  ASSERT_EQ(b.graph.nodes().size(), 1u);
  EXPECT_EQ(b.graph.nodes()[0].op, "Relu");
  EXPECT_TRUE(b.graph.Verify().ok());
}

TEST(EliminateDeadNodes, KeepsANodeWithOneOutputRead) {
  GraphBuilder b;
  int x = b.Input("x", F32({4}));
  std::vector<int> parts = b.Add("Split", {x}, {}, 2);
  b.Output(parts[1]);
  int removed = -1;
  ASSERT_TRUE(EliminateDeadNodes(b.graph, &removed).ok());
  EXPECT_EQ(removed, 0);
  EXPECT_EQ(b.graph.nodes().size(), 1u);
}

}  // namespace
}  // namespace lathe::graph
