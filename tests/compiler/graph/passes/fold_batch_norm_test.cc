#include "compiler/graph/passes/fold_batch_norm.h"

#include "compiler/graph/op_registry.h"
#include "compiler/graph/passes/infer_types.h"
#include "compiler/interp/random_fill.h"
#include "gtest/gtest.h"
#include "tests/compiler/graph/graph_builder.h"
#include "tests/compiler/graph/run_on_host.h"

namespace lathe::graph {
namespace {

using testing::F32;
using testing::Floats;
using testing::GraphBuilder;
using testing::RunOnHost;

TensorData Random(std::vector<int64_t> shape, uint64_t seed, bool positive) {
  TensorData t(DType::Float32(), std::move(shape));
  FillRandom(&t, seed);
  if (positive) {
    for (double& v : t.values) v = RoundToDType(std::abs(v) + 0.5, t.dtype);
  }
  return t;
}

struct ConvBn {
  GraphBuilder b;
  int x, conv, bn;
};

ConvBn Build(bool conv_bias) {
  ConvBn g;
  g.x = g.b.Input("x", F32({1, 2, 5, 5}));
  int w = g.b.Const("w", Random({3, 2, 3, 3}, 1, false));
  std::vector<int> inputs = {g.x, w};
  if (conv_bias) inputs.push_back(g.b.Const("bias", Random({3}, 2, false)));
  g.conv =
      g.b.Add1("Conv", inputs, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  g.bn = g.b.Add1("BatchNormalization",
                  {g.conv, g.b.Const("scale", Random({3}, 3, false)),
                   g.b.Const("shift", Random({3}, 4, false)),
                   g.b.Const("mean", Random({3}, 5, false)),
                   g.b.Const("var", Random({3}, 6, true))},
                  {{"epsilon", 1e-5}});
  return g;
}

TEST(FoldBatchNorm, FoldsIntoTheConvAndKeepsTheResult) {
  for (bool conv_bias : {false, true}) {
    ConvBn g = Build(conv_bias);
    g.b.Output(g.bn);
    ASSERT_TRUE(InferTypes(g.b.graph).ok());
    TensorData x = Random({1, 2, 5, 5}, 9, false);
    const std::vector<TensorData> before = RunOnHost(g.b.graph, {x});
    ASSERT_EQ(before.size(), 1u);
    int folded = 0;
    ASSERT_TRUE(FoldBatchNorm(g.b.graph, &folded).ok());
    EXPECT_EQ(folded, 1);
    EXPECT_TRUE(g.b.graph.nodes()[1].dead);
    const Node& conv = g.b.graph.nodes()[0];
    EXPECT_EQ(conv.outputs[0], g.bn);
    ASSERT_EQ(conv.inputs.size(), 3u);
    EXPECT_TRUE(g.b.graph.IsConstant(conv.inputs[2]));
    EXPECT_TRUE(g.b.graph.Verify().ok()) << g.b.graph.Verify();
    const std::vector<TensorData> after = RunOnHost(g.b.graph, {x});
    ASSERT_EQ(after.size(), 1u);
    ASSERT_EQ(after[0].values.size(), before[0].values.size());
    for (size_t i = 0; i < after[0].values.size(); ++i) {
      EXPECT_NEAR(after[0].values[i], before[0].values[i], 1e-5) << i;
    }
  }
}

TEST(FoldBatchNorm, LeavesAConvOutputWithAnotherReader) {
  ConvBn g = Build(true);
  int relu = g.b.Add1("Relu", {g.conv});
  g.b.Output(g.bn);
  g.b.Output(relu);
  ASSERT_TRUE(InferTypes(g.b.graph).ok());
  int folded = -1;
  ASSERT_TRUE(FoldBatchNorm(g.b.graph, &folded).ok());
  EXPECT_EQ(folded, 0);
  EXPECT_FALSE(g.b.graph.nodes()[1].dead);
}

}  // namespace
}  // namespace lathe::graph
