#include "compiler/graph/tasks.h"

#include "compiler/graph/pipeline.h"
#include "gtest/gtest.h"
#include "tests/compiler/graph/graph_builder.h"

namespace lathe::graph {
namespace {

using testing::F32;
using testing::GraphBuilder;

TEST(Tasks, IdenticalGroupsAreOneTask) {
  // Two conv+relu blocks with the same shapes (different weights) and a
  // pool: two distinct tasks, the first occurring twice.
  GraphBuilder b;
  int x = b.Input("x", F32({1, 4, 8, 8}));
  int v = x;
  for (int block = 0; block < 2; ++block) {
    TensorData w(DType::Float32(), {4, 4, 3, 3});
    w.values.assign(w.values.size(), block + 1.0);
    int conv = b.Add1("Conv", {v, b.Const("w" + std::to_string(block), w)},
                      {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    v = b.Add1("Relu", {conv});
  }
  b.Output(b.Add1("GlobalAveragePool", {v}));
  ASSERT_TRUE(RunGraphPasses(b.graph).ok());
  absl::StatusOr<KernelPartition> p = PartitionGraph(b.graph);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->steps.size(), 3u);
  EXPECT_NE(p->steps[0].args, p->steps[1].args);
  std::vector<ModelTask> tasks = DistinctTasks(*p);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].count, 2);
  EXPECT_EQ(tasks[0].anchor, "Conv");
  EXPECT_EQ(tasks[0].workload, p->steps[0].workload);
  EXPECT_GT(tasks[0].flops, 0);
  EXPECT_EQ(tasks[1].count, 1);
  EXPECT_EQ(tasks[1].anchor, "GlobalAveragePool");
}

}  // namespace
}  // namespace lathe::graph
