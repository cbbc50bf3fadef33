#include "compiler/graph/pipeline.h"

#include "gtest/gtest.h"
#include "tests/compiler/graph/graph_builder.h"

namespace lathe::graph {
namespace {

using testing::F32;
using testing::Floats;
using testing::GraphBuilder;

TEST(Pipeline, RunsThePassesInOrderAndObservesEach) {
  GraphBuilder b;
  int x = b.Input("x", F32({1, 1, 3, 3}));
  int w = b.Const("w", Floats({1, 1, 1, 1}, {2}));
  int conv = b.Add1("Conv", {x, w});
  int bn = b.Add1(
      "BatchNormalization",
      {conv, b.Const("s", Floats({1}, {1})), b.Const("b", Floats({1}, {0})),
       b.Const("m", Floats({1}, {0})), b.Const("v", Floats({1}, {1}))},
      {{"epsilon", 0.0}});
  b.Add1("Exp", {x});  // dead
  b.Output(bn);
  std::vector<std::string> seen;
  ASSERT_TRUE(
      RunGraphPasses(b.graph, [&](const std::string& pass, const Graph& graph) {
        seen.push_back(pass + ":" + std::to_string(graph.nodes().size()));
      }).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "infer-types:3", "fold-batch-norm:3", "winograd-conv:3",
                      "average-pool-counts:3", "eliminate-dead-nodes:1"}));
  ASSERT_EQ(b.graph.nodes().size(), 1u);
  EXPECT_EQ(b.graph.nodes()[0].op, "Conv");
}

TEST(Pipeline, PartitionsAfterThePasses) {
  // The BatchNorm folds into the conv and the dead Exp goes, so one kernel
  // step is left; partitioning without the passes would see three nodes.
  GraphBuilder b;
  int x = b.Input("x", F32({1, 1, 3, 3}));
  int w = b.Const("w", Floats({1, 1, 1, 1}, {2}));
  int conv = b.Add1("Conv", {x, w});
  int bn = b.Add1(
      "BatchNormalization",
      {conv, b.Const("s", Floats({1}, {1})), b.Const("b", Floats({1}, {0})),
       b.Const("m", Floats({1}, {0})), b.Const("v", Floats({1}, {1}))},
      {{"epsilon", 0.0}});
  b.Add1("Exp", {x});
  b.Output(bn);
  absl::StatusOr<KernelPartition> partition = RunPassesAndPartition(b.graph);
  ASSERT_TRUE(partition.ok()) << partition.status();
  ASSERT_EQ(partition->steps.size(), 1u);
  EXPECT_EQ(partition->steps[0].kind, GraphStep::Kind::kKernel);
  EXPECT_EQ(b.graph.nodes().size(), 1u);
}

TEST(Pipeline, RefusesABrokenGraph) {
  Graph graph;
  graph.AddOutput(graph.AddValue("never", F32({1})));
  EXPECT_FALSE(RunGraphPasses(graph).ok());
  EXPECT_FALSE(RunPassesAndPartition(graph).ok());
}

}  // namespace
}  // namespace lathe::graph
