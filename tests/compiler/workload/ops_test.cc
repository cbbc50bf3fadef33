// Each registry operator builds its tensors in the layouts of
// docs/architecture.md and its initial program, at a couple of shapes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/workload/spec.h"

namespace lathe {
namespace {

using Shapes = std::vector<std::vector<int64_t>>;

struct Built {
  Shapes inputs, outputs;
  std::vector<std::string> input_names, output_names, blocks;
  std::string text;
};

Built Build(const std::string& spec) {
  absl::StatusOr<Workload> w = ParseWorkloadSpec(spec);
  EXPECT_TRUE(w.ok()) << spec << ": " << w.status();
  Built b;
  if (!w.ok()) return b;
  for (const te::Tensor& t : w->inputs()) {
    b.inputs.push_back(t.shape());
    b.input_names.push_back(t.name());
  }
  for (const te::Tensor& t : w->outputs()) {
    b.outputs.push_back(t.shape());
    b.output_names.push_back(t.name());
  }
  absl::StatusOr<Program> p = w->InitialProgram();
  EXPECT_TRUE(p.ok()) << spec << ": " << p.status();
  if (!p.ok()) return b;
  for (const BlockNode* block : p->Blocks()) b.blocks.push_back(block->name);
  b.text = PrintProgram(*p);
  return b;
}

using Names = std::vector<std::string>;

TEST(Ops, Matmul) {
  Built b = Build("matmul:M=4,N=5,K=3");
  EXPECT_EQ(b.inputs, (Shapes{{4, 3}, {3, 5}}));
  EXPECT_EQ(b.outputs, (Shapes{{4, 5}}));
  EXPECT_EQ(b.input_names, (Names{"A", "B"}));
  EXPECT_EQ(b.output_names, (Names{"C"}));
  // The same program the te example builds by hand.
  EXPECT_EQ(b.text,
            "program matmul(A: float32[4, 3], B: float32[3, 5]) -> (C: "
            "float32[4, 5])\n"
            "block root():\n"
            "  for i in range(4):\n"
            "    for j in range(5):\n"
            "      for k in range(3):\n"
            "        block C(vi = spatial(4, i), vj = spatial(5, j), vk = "
            "reduce(3, k)):\n"
            "          reads C[vi, vj], A[vi, vk], B[vk, vj]\n"
            "          writes C[vi, vj]\n"
            "          init:\n"
            "            C[vi, vj] = 0.0f\n"
            "          C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n");
  EXPECT_EQ(Build("matmul:M=1024,N=512,K=256").outputs, (Shapes{{1024, 512}}));
}

TEST(Ops, BatchMatmul) {
  Built b = Build("batch_matmul:B=2,M=4,N=5,K=3");
  EXPECT_EQ(b.inputs, (Shapes{{2, 4, 3}, {2, 3, 5}}));
  EXPECT_EQ(b.outputs, (Shapes{{2, 4, 5}}));
  EXPECT_EQ(b.blocks, (Names{"C"}));
  EXPECT_EQ(Build("batch_matmul:B=12,M=128,N=128,K=64").outputs,
            (Shapes{{12, 128, 128}}));
}

TEST(Ops, DenseFusesBiasAndReluAsStages) {
  Built plain = Build("dense:M=4,N=5,K=3");
  EXPECT_EQ(plain.inputs, (Shapes{{4, 3}, {5, 3}}));
  EXPECT_EQ(plain.input_names, (Names{"X", "W"}));
  EXPECT_EQ(plain.blocks, (Names{"Y"}));
  Built bias = Build("dense:M=4,N=5,K=3,bias=1");
  EXPECT_EQ(bias.inputs, (Shapes{{4, 3}, {5, 3}, {5}}));
  EXPECT_EQ(bias.input_names, (Names{"X", "W", "bias"}));
  EXPECT_EQ(bias.blocks, (Names{"dense", "Y"}));
  Built relu = Build("dense:M=4,N=5,K=3,relu=1");
  EXPECT_EQ(relu.blocks, (Names{"dense", "Y"}));
  Built both = Build("dense:M=4,N=5,K=3,bias=1,relu=1");
  EXPECT_EQ(both.blocks, (Names{"dense", "bias_add", "Y"}));
  EXPECT_EQ(both.outputs, (Shapes{{4, 5}}));
}

TEST(Ops, Conv2dNchw) {
  Built b = Build("conv2d_nchw:N=1,C=3,H=8,W=8,K=4,R=3,S=3");
  EXPECT_EQ(b.inputs, (Shapes{{1, 3, 8, 8}, {4, 3, 3, 3}}));
  EXPECT_EQ(b.outputs, (Shapes{{1, 4, 6, 6}}));
  EXPECT_EQ(b.blocks, (Names{"Y"}));  // no padding, no pad stage
  Built padded =
      Build("conv2d_nchw:N=2,C=64,H=56,W=56,K=64,R=3,S=3,stride=2,pad=1");
  EXPECT_EQ(padded.outputs, (Shapes{{2, 64, 28, 28}}));
  EXPECT_EQ(padded.blocks, (Names{"pad", "Y"}));
  EXPECT_THAT(padded.text, ::testing::HasSubstr("select("));
  Built dilated = Build("conv2d_nchw:N=1,C=4,H=10,W=9,K=2,R=3,S=3,dilation=2");
  EXPECT_EQ(dilated.outputs, (Shapes{{1, 2, 6, 5}}));
}

TEST(Ops, Conv2dGroupsAndDepthwise) {
  Built grouped =
      Build("conv2d_nchw:N=1,C=8,H=5,W=5,K=4,R=3,S=3,groups=2,pad=1");
  EXPECT_EQ(grouped.inputs, (Shapes{{1, 8, 5, 5}, {4, 4, 3, 3}}));
  EXPECT_EQ(grouped.outputs, (Shapes{{1, 4, 5, 5}}));
  Built depthwise =
      Build("conv2d_nchw:N=1,C=32,H=7,W=7,K=32,R=3,S=3,groups=32");
  EXPECT_EQ(depthwise.inputs, (Shapes{{1, 32, 7, 7}, {32, 1, 3, 3}}));
  Built nhwc =
      Build("conv2d_nhwc:N=1,C=32,H=7,W=7,K=64,R=3,S=3,groups=32,pad=1");
  EXPECT_EQ(nhwc.inputs, (Shapes{{1, 7, 7, 32}, {3, 3, 1, 64}}));
  EXPECT_EQ(nhwc.outputs, (Shapes{{1, 7, 7, 64}}));
}

TEST(Ops, Conv2dNhwc) {
  Built b = Build("conv2d_nhwc:N=1,C=3,H=8,W=8,K=4,R=3,S=3,pad=1");
  EXPECT_EQ(b.inputs, (Shapes{{1, 8, 8, 3}, {3, 3, 3, 4}}));
  EXPECT_EQ(b.outputs, (Shapes{{1, 8, 8, 4}}));
  EXPECT_EQ(b.blocks, (Names{"pad", "Y"}));
  EXPECT_EQ(Build("conv2d_nhwc:N=4,C=16,H=32,W=32,K=32,R=1,S=1").outputs,
            (Shapes{{4, 32, 32, 32}}));
}

TEST(Ops, Pooling) {
  Built max = Build("max_pool2d:N=1,C=2,H=6,W=6,R=2,S=2,stride=2");
  EXPECT_EQ(max.inputs, (Shapes{{1, 2, 6, 6}}));
  EXPECT_EQ(max.outputs, (Shapes{{1, 2, 3, 3}}));
  EXPECT_EQ(max.blocks, (Names{"Y"}));
  Built max_pad = Build("max_pool2d:N=1,C=2,H=6,W=6,R=3,S=3,stride=2,pad=1");
  EXPECT_EQ(max_pad.outputs, (Shapes{{1, 2, 3, 3}}));
  EXPECT_EQ(max_pad.blocks, (Names{"pad", "Y"}));
  Built avg = Build("avg_pool2d:N=1,C=2,H=5,W=5,R=3,S=3,pad=1");
  EXPECT_EQ(avg.outputs, (Shapes{{1, 2, 5, 5}}));
  EXPECT_EQ(avg.blocks, (Names{"pad", "sum", "Y"}));
  EXPECT_EQ(Build("avg_pool2d:N=1,C=2,H=8,W=8,R=2,S=2,stride=2").blocks,
            (Names{"sum", "Y"}));
}

TEST(Ops, SoftmaxHasThreeStages) {
  Built b = Build("softmax:M=4,N=10");
  EXPECT_EQ(b.inputs, (Shapes{{4, 10}}));
  EXPECT_EQ(b.outputs, (Shapes{{4, 10}}));
  EXPECT_EQ(b.blocks, (Names{"row_max", "row_sum", "Y"}));
  EXPECT_THAT(b.text, ::testing::HasSubstr("exp("));
  EXPECT_EQ(Build("softmax:M=1,N=1").outputs, (Shapes{{1, 1}}));
}

TEST(Ops, Elementwise) {
  Built add = Build("add:M=3,N=4");
  EXPECT_EQ(add.inputs, (Shapes{{3, 4}, {3, 4}}));
  EXPECT_EQ(add.input_names, (Names{"A", "B"}));
  EXPECT_EQ(add.outputs, (Shapes{{3, 4}}));
  Built relu = Build("relu:M=1000,N=1");
  EXPECT_EQ(relu.inputs, (Shapes{{1000, 1}}));
  EXPECT_EQ(relu.blocks, (Names{"Y"}));
}

TEST(Ops, ProgramsAreReproducible) {
  // Two builds of the same spec give structurally equal programs (the
  // search's deduplication relies on it).
  for (const char* spec :
       {"conv2d_nhwc:N=1,C=8,H=9,W=9,K=8,R=3,S=3,pad=1,groups=2",
        "avg_pool2d:N=1,C=2,H=5,W=5,R=3,S=3,pad=1",
        "dense:M=4,N=5,K=3,bias=1,relu=1"}) {
    Workload w1 = *ParseWorkloadSpec(spec);
    Workload w2 = *ParseWorkloadSpec(spec);
    EXPECT_EQ(CanonicalProgramText(*w1.InitialProgram()),
              CanonicalProgramText(*w2.InitialProgram()))
        << spec;
    EXPECT_EQ(PrintProgram(*w1.InitialProgram()),
              PrintProgram(*w1.InitialProgram()));
  }
}

}  // namespace
}  // namespace lathe
