#include "compiler/graph/blocked_layouts.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "compiler/graph/pipeline.h"
#include "compiler/workload/block_dims.h"
#include "compiler/workload/reference.h"
#include "compiler/workload/spec.h"
#include "tests/compiler/graph/graph_builder.h"

namespace lathe::graph {
namespace {

using testing::F32;
using testing::GraphBuilder;

TensorData RandomFloats(std::vector<int64_t> shape, std::mt19937& rng) {
  TensorData t(DType::Float32(), std::move(shape));
  std::uniform_real_distribution<float> value(-1, 1);
  for (double& v : t.values) v = value(rng);
  return t;
}

// MobileNetV2's inverted residual at a small size: a 1x1 expansion to 32
// channels, a depthwise 3x3 over them, a 1x1 projection back to 16.
struct Block {
  GraphBuilder b;
  int x, expanded, filtered, out;
  Block(int64_t channels = 32, bool depthwise_is_output = false) {
    std::mt19937 rng(3);
    x = b.Input("x", F32({1, 16, 5, 5}));
    int w1 = b.Const("w1", RandomFloats({channels, 16, 1, 1}, rng));
    int w2 = b.Const("w2", RandomFloats({channels, 1, 3, 3}, rng));
    int b2 = b.Const("b2", RandomFloats({channels}, rng));
    int w3 = b.Const("w3", RandomFloats({16, channels, 1, 1}, rng));
    expanded = b.Add1("Relu", {b.Add1("Conv", {x, w1})});
    filtered =
        b.Add1("Relu", {b.Add1("Conv", {expanded, w2, b2},
                               {{"group", channels},
                                {"pads", std::vector<int64_t>{1, 1, 1, 1}}})});
    out = b.Add1("Conv", {filtered, w3});
    b.Output(out);
    if (depthwise_is_output) b.Output(filtered);
  }
};

// The partition without blocking and with it, of the same graph.
std::pair<KernelPartition, KernelPartition> BothPartitions(Graph& graph) {
  absl::StatusOr<KernelPartition> blocked = RunPassesAndPartition(graph);
  EXPECT_TRUE(blocked.ok()) << blocked.status();
  absl::StatusOr<KernelPartition> plain = PartitionGraph(graph);
  EXPECT_TRUE(plain.ok()) << plain.status();
  if (!blocked.ok() || !plain.ok()) return {};
  return {*plain, *blocked};
}

// Runs the kernel steps by their workloads' references, each argument's
// data taken as the workload declares it (the same memory).
TensorData RunSteps(const Graph& graph, const KernelPartition& partition,
                    int input, const TensorData& input_data, int output) {
  std::map<int, TensorData> data = {{input, input_data}};
  for (const GraphStep& step : partition.steps) {
    EXPECT_EQ(step.kind, GraphStep::Kind::kKernel);
    absl::StatusOr<Workload> workload = ParseWorkloadSpec(step.workload);
    EXPECT_TRUE(workload.ok()) << workload.status();
    if (!workload.ok()) return {};
    std::vector<TensorData> args;
    for (size_t a = 0; a + 1 < step.args.size(); ++a) {
      const int v = step.args[a];
      TensorData t = graph.IsConstant(v) ? *graph.value(v).constant : data[v];
      t.shape = workload->inputs()[a].shape();
      args.push_back(std::move(t));
    }
    absl::StatusOr<std::vector<TensorData>> result =
        RunReference(*workload, args);
    EXPECT_TRUE(result.ok()) << result.status();
    if (!result.ok()) return {};
    data[step.args.back()] = (*result)[0];
  }
  return data[output];
}

// Each (step, text): the step's blocked workload contains the text.
void ExpectForms(const KernelPartition& blocked,
                 std::initializer_list<std::pair<size_t, const char*>> forms) {
  for (const auto& [step, text] : forms) {
    ASSERT_LT(step, blocked.steps.size());
    EXPECT_TRUE(absl::StrContains(blocked.steps[step].workload, text))
        << text << " in " << blocked.steps[step].workload;
  }
}

// The blocked steps' output equals the plain steps' on random input (the
// graph output is never blocked).
void ExpectSameOutput(const Block& block, const KernelPartition& plain,
                      const KernelPartition& blocked, unsigned seed) {
  std::mt19937 rng(seed);
  const TensorData x = RandomFloats({1, 16, 5, 5}, rng);
  const Graph& graph = block.b.graph;
  const TensorData want = RunSteps(graph, plain, block.x, x, block.out);
  const TensorData got = RunSteps(graph, blocked, block.x, x, block.out);
  ASSERT_EQ(want.values.size(), 16u * 25u);
  ASSERT_EQ(got.values.size(), want.values.size());
  for (size_t i = 0; i < want.values.size(); ++i)
    EXPECT_NEAR(got.values[i], want.values[i], 1e-5) << "element " << i;
}

TEST(BlockedLayouts, AnInvertedResidualComputesInChannelBlocks) {
  Block block;
  auto [plain, blocked] = BothPartitions(block.b.graph);
  ASSERT_EQ(blocked.steps.size(), 3u);
  // The expansion writes the blocked form, the depthwise layer reads and
  // writes it, the projection reads it.
  ExpectForms(blocked, {{0, "input in0[1,16,25]"},
                        {0, "out[v7,v8o,v9,v8i]"},
                        {1, "input in0[1,2,5,5,16]"},
                        {2, "input in0[1,2,25,16]"}});
  // The activations between them keep their values: same ids, same size.
  EXPECT_EQ(blocked.steps[0].args.back(), block.expanded);
  EXPECT_EQ(blocked.steps[1].args[0], block.expanded);
  EXPECT_EQ(blocked.steps[2].args[0], block.filtered);

  // The depthwise weights: a new constant holding them blocked.
  const Graph& graph = block.b.graph;
  const int w2 = plain.steps[1].args[1];
  const int w2_blocked = blocked.steps[1].args[1];
  ASSERT_NE(w2, w2_blocked);
  ASSERT_TRUE(graph.IsConstant(w2_blocked));
  EXPECT_EQ(graph.value(w2_blocked).type.shape,
            (std::vector<int64_t>{2, 1, 3, 3, 16}));
  EXPECT_EQ(
      graph.value(w2_blocked).constant->values,
      BlockValues(graph.value(w2).constant->values, {32, 1, 3, 3}, 0, 16));

  ExpectSameOutput(block, plain, blocked, /*seed=*/5);
}

TEST(BlockedLayouts, ChannelsNotDividingBySixteenTakeBlocksOfEight) {
  EXPECT_EQ(ChannelBlockOf(32), 16);
  EXPECT_EQ(ChannelBlockOf(24), 8);
  EXPECT_EQ(ChannelBlockOf(20), 0);
  EXPECT_EQ(ChannelBlockOf(0), 0);

  Block narrow(24);
  auto [plain, blocked] = BothPartitions(narrow.b.graph);
  ASSERT_EQ(blocked.steps.size(), 3u);
  ExpectForms(blocked, {{0, "out[v7,v8o,v9,v8i]"},
                        {1, "input in0[1,3,5,5,8]"},
                        {2, "input in0[1,3,25,8]"}});
  const Graph& graph = narrow.b.graph;
  const int w2_blocked = blocked.steps[1].args[1];
  ASSERT_TRUE(graph.IsConstant(w2_blocked));
  EXPECT_EQ(graph.value(w2_blocked).type.shape,
            (std::vector<int64_t>{3, 1, 3, 3, 8}));

  ExpectSameOutput(narrow, plain, blocked, /*seed=*/6);
}

TEST(BlockedLayouts, ValuesLeftInOnnxLayout) {
  // A depthwise output that is also a graph output stays NCHW; and then so
  // does its input, as a depthwise layer's input and output channels are
  // one variable.
  Block output(32, /*depthwise_is_output=*/true);
  auto [plain, blocked] = BothPartitions(output.b.graph);
  ASSERT_EQ(blocked.steps.size(), plain.steps.size());
  for (size_t s = 0; s < plain.steps.size(); ++s)
    EXPECT_EQ(blocked.steps[s].workload, plain.steps[s].workload);

  // Channels that divide by neither block: nothing changes.
  Block odd(20);
  auto [plain20, blocked20] = BothPartitions(odd.b.graph);
  ASSERT_EQ(blocked20.steps.size(), plain20.steps.size());
  for (size_t s = 0; s < plain20.steps.size(); ++s) {
    EXPECT_EQ(blocked20.steps[s].workload, plain20.steps[s].workload);
    EXPECT_EQ(blocked20.steps[s].args, plain20.steps[s].args);
  }

  // Dense convolutions keep ONNX's layout.
  GraphBuilder b;
  std::mt19937 rng(4);
  int x = b.Input("x", F32({1, 16, 5, 5}));
  int w1 = b.Const("w1", RandomFloats({32, 16, 3, 3}, rng));
  int w2 = b.Const("w2", RandomFloats({16, 32, 1, 1}, rng));
  b.Output(b.Add1("Conv", {b.Add1("Relu", {b.Add1("Conv", {x, w1})}), w2}));
  auto [dense_plain, dense_blocked] = BothPartitions(b.graph);
  ASSERT_EQ(dense_blocked.steps.size(), dense_plain.steps.size());
  for (size_t s = 0; s < dense_plain.steps.size(); ++s)
    EXPECT_EQ(dense_blocked.steps[s].workload, dense_plain.steps[s].workload);
}

}  // namespace
}  // namespace lathe::graph
