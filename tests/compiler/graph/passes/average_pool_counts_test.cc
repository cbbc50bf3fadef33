#include "compiler/graph/passes/average_pool_counts.h"

#include "compiler/graph/kernel_partition.h"
#include "compiler/graph/passes/infer_types.h"
#include "gtest/gtest.h"
#include "tests/compiler/graph/graph_builder.h"

namespace lathe::graph {
namespace {

using testing::F32;
using testing::GraphBuilder;
using Ints64 = std::vector<int64_t>;

TEST(AveragePoolCounts, AddsTheCountsWherePaddingIsExcluded) {
  GraphBuilder b;
  int x = b.Input("x", F32({1, 1, 3, 3}));
  int pool =
      b.Add1("AveragePool", {x},
             {{"kernel_shape", Ints64{2, 2}}, {"pads", Ints64{1, 1, 0, 0}}});
  b.Output(pool);
  ASSERT_TRUE(InferTypes(b.graph).ok());
  int added = 0;
  ASSERT_TRUE(AddAveragePoolCounts(b.graph, &added).ok());
  EXPECT_EQ(added, 1);
  const Node& node = b.graph.nodes()[0];
  ASSERT_EQ(node.inputs.size(), 2u);
  ASSERT_TRUE(b.graph.IsConstant(node.inputs[1]));
  EXPECT_EQ(b.graph.value(node.inputs[1]).constant->values,
            (std::vector<double>{1, 2, 2, 2, 4, 4, 2, 4, 4}));
  absl::StatusOr<KernelPartition> p = PartitionGraph(b.graph);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->steps.size(), 1u);
  EXPECT_EQ(p->steps[0].kind, GraphStep::Kind::kKernel);
  EXPECT_EQ(p->steps[0].args.size(), 3u);  // input, counts, output
}

TEST(AveragePoolCounts, LeavesFullWindowsAlone) {
  GraphBuilder b;
  int x = b.Input("x", F32({1, 1, 4, 4}));
  b.Output(b.Add1("AveragePool", {x}, {{"kernel_shape", Ints64{2, 2}}}));
  b.Output(b.Add1("AveragePool", {x},
                  {{"kernel_shape", Ints64{3, 3}},
                   {"pads", Ints64{1, 1, 1, 1}},
                   {"count_include_pad", int64_t{1}}}));
  ASSERT_TRUE(InferTypes(b.graph).ok());
  int added = -1;
  ASSERT_TRUE(AddAveragePoolCounts(b.graph, &added).ok());
  EXPECT_EQ(added, 0);
}

}  // namespace
}  // namespace lathe::graph
