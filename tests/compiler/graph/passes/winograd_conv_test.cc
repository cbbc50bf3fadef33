#include "compiler/graph/passes/winograd_conv.h"

#include <map>
#include <string>
#include <vector>

#include "compiler/graph/kernel_partition.h"
#include "compiler/graph/op_registry.h"
#include "compiler/graph/passes/eliminate_dead_nodes.h"
#include "compiler/graph/passes/infer_types.h"
#include "compiler/interp/random_fill.h"
#include "gtest/gtest.h"
#include "tests/compiler/graph/graph_builder.h"
#include "tests/compiler/graph/run_on_host.h"

namespace lathe::graph {
namespace {

using testing::F32;
using testing::GraphBuilder;
using testing::RunOnHost;
using Ints64 = std::vector<int64_t>;

TensorData Random(Ints64 shape, uint64_t seed) {
  TensorData t(DType::Float32(), std::move(shape));
  FillRandom(&t, seed);
  return t;
}

void ExpectClose(const TensorData& got, const TensorData& want) {
  ASSERT_EQ(got.values.size(), want.values.size());
  for (size_t i = 0; i < got.values.size(); ++i) {
    EXPECT_NEAR(got.values[i], want.values[i], 1e-4) << i;
  }
}

std::vector<std::string> LiveOps(const Graph& graph) {
  std::vector<std::string> ops;
  for (const Node& node : graph.nodes()) {
    if (!node.dead) ops.push_back(node.op);
  }
  return ops;
}

// A residual block's second convolution: relu(conv(x) + bias + r).
struct Block {
  GraphBuilder b;
  int x, r, conv, relu;
};

Block BuildBlock(Ints64 x_shape, int64_t k,
                 std::map<std::string, Attr> attrs = {
                     {"pads", Ints64{1, 1, 1, 1}}}) {
  Block g;
  g.x = g.b.Input("x", F32(x_shape));
  const int64_t c = x_shape[1];
  Ints64 out_shape = {x_shape[0], k, x_shape[2], x_shape[3]};
  g.r = g.b.Input("r", F32(out_shape));
  g.conv = g.b.Add1("Conv",
                    {g.x, g.b.Const("w", Random({k, c, 3, 3}, 1)),
                     g.b.Const("bias", Random({k}, 2))},
                    std::move(attrs));
  g.relu = g.b.Add1("Relu", {g.b.Add1("Add", {g.conv, g.r})});
  return g;
}

TEST(WinogradConv, SplitsTheConvAndKeepsTheResult) {
  Block g = BuildBlock({1, 16, 6, 8}, 128);
  g.b.Output(g.relu);
  ASSERT_TRUE(InferTypes(g.b.graph).ok());
  const std::vector<TensorData> inputs = {Random({1, 16, 6, 8}, 5),
                                          Random({1, 128, 6, 8}, 6)};
  const std::vector<TensorData> before = RunOnHost(g.b.graph, inputs);
  ASSERT_EQ(before.size(), 1u);
  int split = 0;
  ASSERT_TRUE(SplitWinogradConvs(g.b.graph, &split).ok());
  EXPECT_EQ(split, 1);
  ASSERT_TRUE(g.b.graph.Verify().ok()) << g.b.graph.Verify();
  // The residual's view comes first (it is a graph input), then the
  // kernels, the moved Add and Relu on the tiled shape, the last view.
  EXPECT_EQ(
      LiveOps(g.b.graph),
      (std::vector<std::string>{"Reshape", "WinogradInputTransform", "Reshape",
                                "MatMul", "Reshape", "WinogradOutputTransform",
                                "Add", "Relu", "Reshape"}));
  EXPECT_EQ(g.b.graph.value(g.b.graph.outputs()[0]).type.shape,
            (Ints64{1, 128, 6, 8}));
  const std::vector<TensorData> after = RunOnHost(g.b.graph, inputs);
  ASSERT_EQ(after.size(), 1u);
  ExpectClose(after[0], before[0]);
}

TEST(WinogradConv, TheEpilogueFusesIntoTheOutputTransform) {
  Block g = BuildBlock({1, 16, 4, 4}, 128);
  g.b.Output(g.relu);
  ASSERT_TRUE(InferTypes(g.b.graph).ok());
  ASSERT_TRUE(SplitWinogradConvs(g.b.graph).ok());
  ASSERT_TRUE(EliminateDeadNodes(g.b.graph).ok());
  absl::StatusOr<KernelPartition> partition = PartitionGraph(g.b.graph);
  ASSERT_TRUE(partition.ok()) << partition.status();
  std::vector<std::string> anchors;
  for (const GraphStep& step : partition->steps) {
    if (step.kind != GraphStep::Kind::kKernel) continue;
    anchors.push_back(step.anchor);
    if (step.anchor == "WinogradOutputTransform") {
      EXPECT_EQ(step.nodes.size(), 3u) << step.workload;
    }
  }
  EXPECT_EQ(anchors,
            (std::vector<std::string>{"WinogradInputTransform", "MatMul",
                                      "WinogradOutputTransform"}));
}

TEST(WinogradConv, AnOperandWrittenAfterTheConvLeavesTheAddInPlace) {
  // Add(conv(x), conv1x1(x)): the 1x1 branch is written after the 3x3
  // conv, so the Add stays on [N,K,H,W] and fuses into the branch's kernel.
  GraphBuilder b;
  const int x = b.Input("x", F32({1, 16, 4, 4}));
  const int conv = b.Add1("Conv", {x, b.Const("w", Random({128, 16, 3, 3}, 1))},
                          {{"pads", Ints64{1, 1, 1, 1}}});
  const int branch =
      b.Add1("Conv", {x, b.Const("w1", Random({128, 16, 1, 1}, 2))});
  b.Output(b.Add1("Add", {conv, branch}));
  ASSERT_TRUE(InferTypes(b.graph).ok());
  const std::vector<TensorData> inputs = {Random({1, 16, 4, 4}, 3)};
  const std::vector<TensorData> before = RunOnHost(b.graph, inputs);
  ASSERT_EQ(before.size(), 1u);
  ASSERT_TRUE(SplitWinogradConvs(b.graph).ok());
  ASSERT_TRUE(b.graph.Verify().ok()) << b.graph.Verify();
  EXPECT_EQ(LiveOps(b.graph),
            (std::vector<std::string>{
                "WinogradInputTransform", "Reshape", "MatMul", "Reshape",
                "WinogradOutputTransform", "Reshape", "Conv", "Add"}));
  const std::vector<TensorData> after = RunOnHost(b.graph, inputs);
  ASSERT_EQ(after.size(), 1u);
  ExpectClose(after[0], before[0]);
}

TEST(WinogradConv, TwoConvsShareTheTablesAndKeepTheirWeights) {
  GraphBuilder b;
  const int x = b.Input("x", F32({1, 16, 4, 4}));
  const std::map<std::string, Attr> pad1 = {{"pads", Ints64{1, 1, 1, 1}}};
  const int first =
      b.Add1("Conv", {x, b.Const("w1", Random({128, 16, 3, 3}, 1))}, pad1);
  b.Output(b.Add1("Conv", {first, b.Const("w2", Random({128, 128, 3, 3}, 2))},
                  pad1));
  ASSERT_TRUE(InferTypes(b.graph).ok());
  const std::vector<TensorData> inputs = {Random({1, 16, 4, 4}, 3)};
  const std::vector<TensorData> before = RunOnHost(b.graph, inputs);
  ASSERT_EQ(before.size(), 1u);
  int split = 0;
  ASSERT_TRUE(SplitWinogradConvs(b.graph, &split).ok());
  EXPECT_EQ(split, 2);
  ASSERT_TRUE(b.graph.Verify().ok()) << b.graph.Verify();
  std::vector<const Node*> transforms, products;
  for (const Node& node : b.graph.nodes()) {
    if (node.op == "WinogradInputTransform") transforms.push_back(&node);
    if (node.op == "MatMul") products.push_back(&node);
  }
  ASSERT_EQ(transforms.size(), 2u);
  ASSERT_EQ(products.size(), 2u);
  EXPECT_EQ(transforms[0]->inputs[1], transforms[1]->inputs[1]);
  EXPECT_NE(products[0]->inputs[0], products[1]->inputs[0]);
  const std::vector<TensorData> after = RunOnHost(b.graph, inputs);
  ASSERT_EQ(after.size(), 1u);
  ExpectClose(after[0], before[0]);
}

TEST(WinogradConv, AConvOutputWithTwoReadersKeepsBoth) {
  Block g = BuildBlock({1, 16, 4, 4}, 128);
  g.b.Output(g.relu);
  g.b.Output(g.conv);
  ASSERT_TRUE(InferTypes(g.b.graph).ok());
  const std::vector<TensorData> inputs = {Random({1, 16, 4, 4}, 5),
                                          Random({1, 128, 4, 4}, 6)};
  const std::vector<TensorData> before = RunOnHost(g.b.graph, inputs);
  ASSERT_EQ(before.size(), 2u);
  ASSERT_TRUE(SplitWinogradConvs(g.b.graph).ok());
  ASSERT_TRUE(g.b.graph.Verify().ok()) << g.b.graph.Verify();
  const std::vector<TensorData> after = RunOnHost(g.b.graph, inputs);
  ASSERT_EQ(after.size(), 2u);
  ExpectClose(after[0], before[0]);
  ExpectClose(after[1], before[1]);
}

TEST(WinogradConv, LeavesTheConvolutionsItDoesNotFit) {
  const std::map<std::string, Attr> pad1 = {{"pads", Ints64{1, 1, 1, 1}}};
  struct Case {
    const char* label;
    Ints64 x;
    int64_t k;
    std::map<std::string, Attr> attrs;
  };
  const Case cases[] = {
      {"stride 2",
       {1, 16, 8, 8},
       128,
       {{"pads", Ints64{1, 1, 1, 1}}, {"strides", Ints64{2, 2}}}},
      {"no padding", {1, 16, 8, 8}, 128, {}},
      {"dilation 2",
       {1, 16, 8, 8},
       128,
       {{"pads", Ints64{1, 1, 1, 1}}, {"dilations", Ints64{2, 2}}}},
      {"odd height", {1, 16, 7, 8}, 128, pad1},
      {"few input channels", {1, 8, 8, 8}, 128, pad1},
      {"few output channels",
       {1, 128, 8, 8},
       kWinogradMinOutputChannels / 2,
       pad1},
  };
  for (const Case& c : cases) {
    GraphBuilder b;
    const int x = b.Input("x", F32(c.x));
    b.Output(b.Add1("Conv", {x, b.Const("w", Random({c.k, c.x[1], 3, 3}, 1))},
                    c.attrs));
    ASSERT_TRUE(InferTypes(b.graph).ok()) << c.label;
    int split = -1;
    ASSERT_TRUE(SplitWinogradConvs(b.graph, &split).ok());
    EXPECT_EQ(split, 0) << c.label;
  }
  {
    // The control: the same graph with stride 1 and pad 1 splits.
    GraphBuilder b;
    const int x = b.Input("x", F32({1, 16, 8, 8}));
    b.Output(
        b.Add1("Conv", {x, b.Const("w", Random({128, 16, 3, 3}, 1))}, pad1));
    ASSERT_TRUE(InferTypes(b.graph).ok());
    int split = -1;
    ASSERT_TRUE(SplitWinogradConvs(b.graph, &split).ok());
    EXPECT_EQ(split, 1);
  }
  // Weights that arrive at run time.
  GraphBuilder b;
  const int x = b.Input("x", F32({1, 16, 4, 4}));
  const int w = b.Input("w", F32({128, 16, 3, 3}));
  b.Output(b.Add1("Conv", {x, w}, pad1));
  ASSERT_TRUE(InferTypes(b.graph).ok());
  int split = -1;
  ASSERT_TRUE(SplitWinogradConvs(b.graph, &split).ok());
  EXPECT_EQ(split, 0);
}

}  // namespace
}  // namespace lathe::graph
