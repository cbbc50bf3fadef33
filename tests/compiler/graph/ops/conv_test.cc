// Conv, ConvTranspose and the pools: output sizes (strides, dilations,
// pads, auto_pad, ceil_mode) and values on small cases worked by hand.
#include "gtest/gtest.h"
#include "tests/compiler/graph/ops/op_check.h"

namespace lathe::graph {
namespace {

using namespace testing;  // NOLINT
using Ints64 = std::vector<int64_t>;

TensorData Iota(std::vector<int64_t> shape) {
  TensorData t(DType::Float32(), std::move(shape));
  for (size_t i = 0; i < t.values.size(); ++i) t.values[i] = double(i);
  return t;
}

TensorData Ones(std::vector<int64_t> shape) {
  TensorData t(DType::Float32(), std::move(shape));
  for (double& v : t.values) v = 1;
  return t;
}

TEST(Conv, SumsWindowsWithPaddingAndBias) {
  // 3x3 input 0..8, 2x2 kernel of ones, pad 1 on the top/left only.
  OpRun run = RunOp(
      "Conv", {Iota({1, 1, 3, 3}), Ones({1, 1, 2, 2}), Floats({1}, {100})},
      {{"pads", Ints64{1, 1, 0, 0}}});
  ExpectOutput(run, F32({1, 1, 3, 3}),
               {100, 101, 103, 103, 108, 112, 109, 120, 124});
}

TEST(Conv, OutputSizes) {
  auto shape = [](std::map<std::string, Attr> attrs, Ints64 x, Ints64 w) {
    GraphBuilder b;
    b.Add("Conv", {b.Input("x", F32(x)), b.Input("w", F32(w))},
          std::move(attrs));
    absl::StatusOr<std::vector<TensorType>> types =
        InferNodeTypes(b.graph, b.graph.nodes()[0]);
    EXPECT_TRUE(types.ok()) << types.status();
    return types.ok() ? (*types)[0].shape : Ints64{};
  };
  EXPECT_EQ(shape({{"strides", Ints64{2, 2}}, {"pads", Ints64{3, 3, 3, 3}}},
                  {1, 3, 224, 224}, {64, 3, 7, 7}),
            (Ints64{1, 64, 112, 112}));
  EXPECT_EQ(shape({{"dilations", Ints64{2, 3}}}, {1, 1, 10, 10}, {1, 1, 3, 3}),
            (Ints64{1, 1, 6, 4}));
  EXPECT_EQ(shape({{"auto_pad", std::string("SAME_UPPER")},
                   {"strides", Ints64{2, 2}}},
                  {1, 1, 5, 6}, {1, 1, 3, 3}),
            (Ints64{1, 1, 3, 3}));
  EXPECT_EQ(
      shape({{"auto_pad", std::string("VALID")}}, {1, 1, 5, 6}, {1, 1, 3, 3}),
      (Ints64{1, 1, 3, 4}));
  EXPECT_EQ(shape({{"group", int64_t{32}}}, {1, 32, 8, 8}, {32, 1, 3, 3}),
            (Ints64{1, 32, 6, 6}));
}

TEST(Conv, DepthwiseUsesOneChannelPerGroup) {
  OpRun run = RunOp("Conv", {Iota({1, 2, 2, 2}), Floats({2, 1, 1, 1}, {1, 10})},
                    {{"group", int64_t{2}}});
  ExpectOutput(run, F32({1, 2, 2, 2}), {0, 1, 2, 3, 40, 50, 60, 70});
}

TEST(Conv, RefusesWhatDoesNotFit) {
  ExpectRefused(RunOp("Conv",
                      {TensorData(DType::Float32(), {1, 3, 8, 8}),
                       TensorData(DType::Float32(), {4, 2, 3, 3})},
                      {{"group", int64_t{2}}}),
                {"Conv_0", "group 2"});
  ExpectRefused(RunOp("Conv",
                      {TensorData(DType::Float32(), {1, 1, 8, 8}),
                       TensorData(DType::Float32(), {1, 1, 3, 3})},
                      {{"auto_pad", std::string("SAME_MIDDLE")}}),
                {"Conv_0", "auto_pad=SAME_MIDDLE"});
  ExpectRefused(RunOp("Conv", {TensorData(DType::Float32(), {1, 1, 2, 2}),
                               TensorData(DType::Float32(), {1, 1, 3, 3})}),
                {"Conv_0", "exceeds"});
}

TEST(ConvTranspose, ScattersEachInputOverTheKernel) {
  // 1-D: x = [1, 2], w = [1, 1, 1], stride 2 -> length 2*(2-1)+3 = 5.
  OpRun run =
      RunOp("ConvTranspose", {Floats({1, 1, 2}, {1, 2}), Ones({1, 1, 3})},
            {{"strides", Ints64{2}}});
  ExpectOutput(run, F32({1, 1, 5}), {1, 1, 3, 2, 2});
  OpRun padded =
      RunOp("ConvTranspose", {Floats({1, 1, 2}, {1, 2}), Ones({1, 1, 3})},
            {{"strides", Ints64{2}},
             {"pads", Ints64{1, 0}},
             {"output_padding", Ints64{1}}});
  ExpectOutput(padded, F32({1, 1, 5}), {1, 3, 2, 2, 0});
  OpRun shaped =
      RunOp("ConvTranspose", {Floats({1, 1, 2}, {1, 2}), Ones({1, 1, 3})},
            {{"strides", Ints64{2}}, {"output_shape", Ints64{4}}});
  ASSERT_TRUE(shaped.types.ok()) << shaped.types.status();
  EXPECT_EQ((*shaped.types)[0].shape, (Ints64{1, 1, 4}));
}

TEST(Pools, MaxAndAverageWindows) {
  TensorData x = Iota({1, 1, 4, 4});
  ExpectOutput(
      RunOp("MaxPool", {x},
            {{"kernel_shape", Ints64{2, 2}}, {"strides", Ints64{2, 2}}}),
      F32({1, 1, 2, 2}), {5, 7, 13, 15});
  ExpectOutput(
      RunOp("AveragePool", {x},
            {{"kernel_shape", Ints64{2, 2}}, {"strides", Ints64{2, 2}}}),
      F32({1, 1, 2, 2}), {2.5, 4.5, 10.5, 12.5});
  // Padding excluded from the count by default, included when asked.
  TensorData ones = Ones({1, 1, 2, 2});
  ExpectOutput(
      RunOp("AveragePool", {ones},
            {{"kernel_shape", Ints64{2, 2}}, {"pads", Ints64{1, 1, 0, 0}}}),
      F32({1, 1, 2, 2}), {1, 1, 1, 1});
  ExpectOutput(RunOp("AveragePool", {ones},
                     {{"kernel_shape", Ints64{2, 2}},
                      {"pads", Ints64{1, 1, 0, 0}},
                      {"count_include_pad", int64_t{1}}}),
               F32({1, 1, 2, 2}), {0.25, 0.5, 0.5, 1});
  ExpectOutput(RunOp("GlobalAveragePool", {x}), F32({1, 1, 1, 1}), {7.5});
  ExpectOutput(RunOp("GlobalMaxPool", {x}), F32({1, 1, 1, 1}), {15});
}

TEST(Pools, CeilModeAddsAWindowThatStartsInside) {
  TensorData x = Iota({1, 1, 5, 5});
  OpRun run = RunOp("MaxPool", {x},
                    {{"kernel_shape", Ints64{2, 2}},
                     {"strides", Ints64{2, 2}},
                     {"ceil_mode", int64_t{1}}});
  ExpectOutput(run, F32({1, 1, 3, 3}), {6, 8, 9, 16, 18, 19, 21, 23, 24});
  OpRun floor =
      RunOp("MaxPool", {x},
            {{"kernel_shape", Ints64{2, 2}}, {"strides", Ints64{2, 2}}});
  ASSERT_TRUE(floor.types.ok());
  EXPECT_EQ((*floor.types)[0].shape, (Ints64{1, 1, 2, 2}));
}

TEST(Pools, RefuseTheIndicesOutput) {
  ExpectRefused(RunOp("MaxPool", {Iota({1, 1, 4, 4})},
                      {{"kernel_shape", Ints64{2, 2}}}, {}, 2),
                {"MaxPool_0", "Indices"});
}

}  // namespace
}  // namespace lathe::graph
