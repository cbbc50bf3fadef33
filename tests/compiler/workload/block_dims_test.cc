#include "compiler/workload/block_dims.h"

#include <gtest/gtest.h>

#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/workload/reference.h"
#include "tests/compiler/workload/definition_text.h"

namespace lathe {
namespace {

using testing::Checked;
using testing::DimsText;

// The blocked form as "text|dims".
std::string Blocked(const std::string& expr, const std::string& dims,
                    const std::vector<DimBlock>& blocks) {
  absl::StatusOr<BlockedDefinition> blocked =
      BlockDims(Checked(expr, dims), blocks);
  EXPECT_TRUE(blocked.ok()) << blocked.status();
  if (!blocked.ok()) return "";
  return absl::StrCat(PrintParsedDefinition(blocked->definition.parsed), "|",
                      DimsText(blocked->definition.dims));
}

// The blocked workload computes what the original does: random inputs, the
// blocked ones handed over in blocked order (BlockValues), both references
// run, and the original's output blocked as requested equals the blocked
// workload's element by element.
void ExpectSameResults(const std::string& expr, const std::string& dims,
                       const std::vector<DimBlock>& blocks) {
  const CustomDefinition original = Checked(expr, dims);
  absl::StatusOr<BlockedDefinition> blocked = BlockDims(original, blocks);
  ASSERT_TRUE(blocked.ok()) << blocked.status();
  absl::StatusOr<Workload> before = MakeCustomWorkload(original);
  absl::StatusOr<Workload> after = MakeCustomWorkload(blocked->definition);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_EQ(before->inputs().size(), after->inputs().size());
  auto blocking_of = [&](const std::string& name) -> const DimBlock* {
    for (const DimBlock& b : blocks)
      if (b.tensor == name) return &b;
    return nullptr;
  };
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<TensorData> inputs, blocked_inputs;
  for (size_t i = 0; i < before->inputs().size(); ++i) {
    TensorData data(DType::Float32(), before->inputs()[i].shape());
    for (double& v : data.values) v = value(rng);
    TensorData same(DType::Float32(), after->inputs()[i].shape());
    ASSERT_EQ(data.size(), same.size()) << "input " << i;
    const DimBlock* b = blocking_of(original.tensors[i].name);
    same.values = b == nullptr
                      ? data.values
                      : BlockValues(data.values, data.shape, b->dim, b->block);
    inputs.push_back(std::move(data));
    blocked_inputs.push_back(std::move(same));
  }
  absl::StatusOr<std::vector<TensorData>> want = RunReference(*before, inputs);
  absl::StatusOr<std::vector<TensorData>> got =
      RunReference(*after, blocked_inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  const DimBlock* out = blocking_of("out");
  std::vector<double> expected =
      out == nullptr ? (*want)[0].values
                     : BlockValues((*want)[0].values, (*want)[0].shape,
                                   out->dim, out->block);
  ASSERT_EQ(expected.size(), (*got)[0].values.size());
  for (size_t k = 0; k < expected.size(); ++k) {
    ASSERT_EQ(expected[k], (*got)[0].values[k]) << "element " << k;
  }
}

// MobileNetV2's stride-2 depthwise group as the partition emits it, at a
// small size: padded windows along h and w, one weight and bias per channel.
constexpr char kDepthwise[] =
    "input in0[1,8,7,7]; input in1[8,1,3,3] const; input in2[8] const; "
    "t1[v0,v1,v2,v3] += in0?[v0,v1,2*v2+v4-1,2*v3+v5-1] * in1[v1,0,v4,v5]; "
    "t0[v6,v7,v8,v9] = t1[v6,v7,v8,v9] + in2[v7]; "
    "out[v10,v11,v12,v13] = min(max(t0[v10,v11,v12,v13], 0.0), 6.0)";
constexpr char kDepthwiseDims[] =
    "v0=1,v1=8,v2=4,v3=4,v4=3,v5=3,v6=1,v7=8,v8=4,v9=4,v10=1,v11=8,v12=4,"
    "v13=4";

TEST(BlockDims, DepthwiseConvolutionComputesInChannelBlocks) {
  const std::vector<DimBlock> blocks = {
      {"in0", 1, 4}, {"in1", 0, 4}, {"in2", 0, 4}, {"out", 1, 4}};
  // Every statement follows the channel split: the intermediates t1 and t0
  // are blocked too, so the reduction and its epilogue share one layout.
  EXPECT_EQ(Blocked(kDepthwise, kDepthwiseDims, blocks),
            "input in0[1,2,7,7,4]; input in1[2,1,3,3,4] const; "
            "input in2[2,4] const; "
            "t1[v0,v1o,v2,v3,v1i] += in0?[v0,v1o,2*v2+v4-1,2*v3+v5-1,v1i] * "
            "in1[v1o,0,v4,v5,v1i]; "
            "t0[v6,v7o,v8,v9,v7i] = t1[v6,v7o,v8,v9,v7i] + in2[v7o,v7i]; "
            "out[v10,v11o,v12,v13,v11i] = "
            "min(max(t0[v10,v11o,v12,v13,v11i], 0.0), 6.0)"
            "|v0=1,v10=1,v11i=4,v11o=2,v12=4,v13=4,v1i=4,v1o=2,v2=4,v3=4,"
            "v4=3,v5=3,v6=1,v7i=4,v7o=2,v8=4,v9=4");
  ExpectSameResults(kDepthwise, kDepthwiseDims, blocks);
}

// A 1x1 convolution reading and writing blocked activations, with a
// residual input: the reduction over input channels splits into blocks and
// lanes; the weights, blocked by output channel, read their input channel
// through 4*v4o + v4i. Blocking the output alone blocks the intermediates
// too (the epilogue reads them with the split variable).
TEST(BlockDims, PointwiseConvolutionSplitsItsReduction) {
  const std::string expr =
      "input in0[1,8,30]; input in1[12,8,1,1] const; input in2[12] const; "
      "input in3[1,12,30]; "
      "t1[v0,v1,v2] += in0[v0,v4,v2] * in1[v1,v4,0,0]; "
      "t0[v7,v8,v9] = t1[v7,v8,v9] + in2[v8]; "
      "out[v11,v12,v13] = in3[v11,v12,v13] + t0[v11,v12,v13]";
  const std::string dims =
      "v0=1,v1=12,v2=30,v4=8,v7=1,v8=12,v9=30,v11=1,v12=12,v13=30";
  const std::vector<DimBlock> blocks = {{"in0", 1, 4},
                                        {"in1", 0, 4},
                                        {"in2", 0, 4},
                                        {"in3", 1, 4},
                                        {"out", 1, 4}};
  const std::string text = Blocked(expr, dims, blocks);
  EXPECT_TRUE(absl::StrContains(
      text,
      "t1[v0,v1o,v2,v1i] += in0[v0,v4o,v2,v4i] * in1[v1o,v4i+4*v4o,0,0,v1i]"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "v4i=4,v4o=2")) << text;
  ExpectSameResults(expr, dims, blocks);

  // Only the output blocked: the input is read as it is, the intermediates
  // follow the output.
  const std::vector<DimBlock> out_only = {{"out", 1, 4}};
  const std::string mixed = Blocked(expr, dims, out_only);
  EXPECT_TRUE(absl::StrContains(
      mixed, "t1[v0,v1o,v2,v1i] += in0[v0,v4,v2] * in1[v1i+4*v1o,v4,0,0]"))
      << mixed;
  EXPECT_TRUE(absl::StrContains(mixed, "in3[v11,v12i+4*v12o,v13]")) << mixed;
  ExpectSameResults(expr, dims, out_only);
}

// Variables shared by several statements are split once, everywhere.
TEST(BlockDims, SharedVariablesSplitEverywhere) {
  const std::string expr =
      "input in0[2,8,3]; t[n,c,p] = in0[n,c,p] * 2.0; out[n,c,p] = t[n,c,p] + "
      "1.0";
  const std::string dims = "n=2,c=8,p=3";
  EXPECT_EQ(Blocked(expr, dims, {{"in0", 1, 8}, {"out", 1, 8}}),
            "input in0[2,1,3,8]; t[n,co,p,ci] = in0[n,co,p,ci] * 2.0; "
            "out[n,co,p,ci] = t[n,co,p,ci] + 1.0|ci=8,co=1,n=2,p=3");
  ExpectSameResults(expr, dims, {{"in0", 1, 8}, {"out", 1, 8}});
}

// With block_constants, the weights and bias follow the channel split
// without being asked for, and the result says how they are stored.
TEST(BlockDims, ConstantsFollowWhenAllowed) {
  absl::StatusOr<BlockedDefinition> blocked =
      BlockDims(Checked(kDepthwise, kDepthwiseDims),
                {{"in0", 1, 4}, {"out", 1, 4}}, /*block_constants=*/true);
  ASSERT_TRUE(blocked.ok()) << blocked.status();
  ASSERT_EQ(blocked->blocked.size(), 4u);
  std::map<std::string, int> dims;
  for (const DimBlock& b : blocked->blocked) {
    EXPECT_EQ(b.block, 4) << b.tensor;
    dims[b.tensor] = b.dim;
  }
  EXPECT_EQ(dims, (std::map<std::string, int>{
                      {"in0", 1}, {"in1", 0}, {"in2", 0}, {"out", 1}}));
  ExpectSameResults(kDepthwise, kDepthwiseDims, blocked->blocked);

  // Without it, they are read through 4*v1o + v1i, as they are.
  absl::StatusOr<BlockedDefinition> plain = BlockDims(
      Checked(kDepthwise, kDepthwiseDims), {{"in0", 1, 4}, {"out", 1, 4}});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->blocked.size(), 2u);
  EXPECT_TRUE(absl::StrContains(PrintParsedDefinition(plain->definition.parsed),
                                "in1[v1i+4*v1o,0,v4,v5]"))
      << PrintParsedDefinition(plain->definition.parsed);
}

// A 1x1 convolution between blocked activations: its weights, read with
// both channel variables split, are blocked by output channel, the lanes
// the statement writes.
TEST(BlockDims, ConstantsTakeTheWrittenLanes) {
  const std::string expr =
      "input in0[1,8,30]; input in1[12,8,1,1] const; "
      "out[v0,v1,v2] += in0[v0,v4,v2] * in1[v1,v4,0,0]";
  const std::string dims = "v0=1,v1=12,v2=30,v4=8";
  absl::StatusOr<BlockedDefinition> blocked =
      BlockDims(Checked(expr, dims), {{"in0", 1, 4}, {"out", 1, 4}},
                /*block_constants=*/true);
  ASSERT_TRUE(blocked.ok()) << blocked.status();
  const std::string text = PrintParsedDefinition(blocked->definition.parsed);
  EXPECT_TRUE(absl::StrContains(text, "in1[v1o,v4i+4*v4o,0,0,v1i]")) << text;
  ExpectSameResults(expr, dims, blocked->blocked);
}

TEST(BlockDims, BlockValuesMovesTheLaneLast) {
  // [2 (c), 3 (w)] blocked at 0 by 2: [1, 3, 2], element (c, w) at (w, c).
  EXPECT_EQ(BlockValues<double>({0, 1, 2, 10, 11, 12}, {2, 3}, 0, 2),
            (std::vector<double>{0, 10, 1, 11, 2, 12}));
}

TEST(BlockDims, RefusesWhatItCannotBlock) {
  const CustomDefinition dw = Checked(kDepthwise, kDepthwiseDims);
  auto error = [&](const std::vector<DimBlock>& blocks) {
    absl::StatusOr<BlockedDefinition> blocked = BlockDims(dw, blocks);
    EXPECT_FALSE(blocked.ok());
    return blocked.ok() ? std::string() : blocked.status().ToString();
  };
  // A strided, padded window along h.
  std::string e = error({{"in0", 2, 7}});
  EXPECT_TRUE(absl::StrContains(e, "in0 along dimension 2")) << e;
  EXPECT_TRUE(absl::StrContains(e, "2*v2+v4-1")) << e;
  // Blocking the input's channels splits the output's, which is not blocked.
  e = error({{"in0", 1, 4}, {"in1", 0, 4}, {"in2", 0, 4}});
  EXPECT_TRUE(absl::StrContains(e, "output out is not blocked")) << e;
  // Two block sizes for one channel variable.
  e = error({{"in0", 1, 4}, {"out", 1, 2}});
  EXPECT_TRUE(absl::StrContains(e, "split by")) << e;
  // Requests that are wrong in themselves.
  e = error({{"in0", 1, 3}});
  EXPECT_TRUE(absl::StrContains(e, "INVALID_ARGUMENT")) << e;
  EXPECT_TRUE(absl::StrContains(e, "its extent there is 8")) << e;
  e = error({{"t1", 1, 4}});
  EXPECT_TRUE(absl::StrContains(e, "not an input or the output")) << e;
  e = error({{"in0", 4, 2}});
  EXPECT_TRUE(absl::StrContains(e, "it has 4")) << e;
  e = error({{"out", 1, 4}, {"out", 1, 4}});
  EXPECT_TRUE(absl::StrContains(e, "named twice")) << e;
}

}  // namespace
}  // namespace lathe
