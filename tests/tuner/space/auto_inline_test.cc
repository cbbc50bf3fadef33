// Tests of the InlineElementwise rule (tuner/space/auto_inline.h).
#include "tuner/space/auto_inline.h"

#include <gtest/gtest.h>

#include "compiler/codegen/cpu_target.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "tests/tuner/space/space_test_util.h"

namespace lathe::tuner {
namespace {

using testing::CheckProgram;
using testing::RuleFixture;

// Applies the rule to every block, last to first (as GenerateDesignSpaces
// does), and returns the one schedule it leads to.
std::unique_ptr<TracedSchedule> InlineAll(const RuleFixture& f,
                                          const InlineElementwise& rule) {
  std::unique_ptr<TracedSchedule> sch = f.Fresh();
  std::vector<std::string> names;
  for (const BlockNode* b : f.initial.Blocks()) names.push_back(b->name);
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    if (sch->program().FindBlock(*it) == nullptr) continue;
    auto out = rule.Apply(std::move(sch), *it, f.context);
    EXPECT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->size(), 1u);  // no branch on these workloads
    sch = std::move(out->front());
  }
  return sch;
}

std::vector<std::string> BlockNames(const Program& p) {
  std::vector<std::string> names;
  for (const BlockNode* b : p.Blocks()) names.push_back(b->name);
  return names;
}

TEST(InlineElementwise, DenseBiasReluKeepsOneEpilogue) {
  RuleFixture f("dense:M=8,N=8,K=8,bias=1,relu=1");
  ASSERT_EQ(f.initial.Blocks().size(), 3u);
  std::unique_ptr<TracedSchedule> sch = InlineAll(f, InlineElementwise());
  const Program& p = sch->program();
  // The relu folds into the bias add (the reduction cannot take either):
  // the dense block and one element-wise epilogue writing Y.
  ASSERT_EQ(p.Blocks().size(), 2u) << PrintProgram(p);
  EXPECT_TRUE(p.Blocks()[0]->IsReduction());
  const BlockAccesses epilogue = AccessesOf(*p.Blocks()[1]);
  ASSERT_EQ(epilogue.writes.size(), 1u);
  EXPECT_EQ(epilogue.writes[0].buffer->name, "Y");
  EXPECT_EQ(testing::CountInstructions(sch->trace(), "reverse_compute_inline"),
            1);
  EXPECT_TRUE(CheckProgram(f.workload, p, HostTarget(1)).ok());
}

TEST(InlineElementwise, ChainOfElementwiseStagesBecomesOneBlock) {
  RuleFixture f(
      "custom:T[i,j] = A[i,j] + B[i,j]; U[i,j] = T[i,j] * 2; D[i,j] = "
      "max(U[i,j], 0)"
      "|i=5,j=7");
  ASSERT_EQ(f.initial.Blocks().size(), 3u);
  std::unique_ptr<TracedSchedule> sch = InlineAll(f, InlineElementwise());
  EXPECT_EQ(sch->program().Blocks().size(), 1u) << PrintProgram(sch->program());
  absl::Status checked =
      CheckProgram(f.workload, sch->program(), HostTarget(1));
  EXPECT_TRUE(checked.ok()) << checked;
}

TEST(InlineElementwise, KeepsConvPaddingReusedAcrossOutputChannels) {
  RuleFixture f("conv2d_nchw:N=1,C=3,H=8,W=8,K=4,R=3,S=3,pad=1");
  EXPECT_TRUE(IsCostlyReusedStage(f.initial, *f.initial.FindBlock("pad")));
  // Not a branch: a conv's windows overlap too, but its output channels
  // reuse each element anyway (InlineAll expects one space).
  std::unique_ptr<TracedSchedule> sch = InlineAll(f, InlineElementwise());
  EXPECT_EQ(BlockNames(sch->program()), BlockNames(f.initial));
  EXPECT_TRUE(sch->trace().instructions.empty()) << sch->trace().ToText();

  // On request it is inlined, and still correct.
  std::unique_ptr<TracedSchedule> inlined =
      InlineAll(f, InlineElementwise(/*inline_reused_stages=*/true));
  EXPECT_EQ(inlined->program().FindBlock("pad"), nullptr);
  absl::Status checked =
      CheckProgram(f.workload, inlined->program(), HostTarget(1));
  EXPECT_TRUE(checked.ok()) << checked;
}

// The padding stage of `spec` (named `pad`), read through overlapping
// windows: the rule branches, the stage kept in the first space and inlined
// in the second, both programs checked against the reference.
void ExpectBranchesOnWindowPadding(const std::string& spec,
                                   const std::string& pad) {
  RuleFixture f(spec);
  const BlockNode* stage = f.initial.FindBlock(pad);
  ASSERT_NE(stage, nullptr) << PrintProgram(f.initial);
  EXPECT_FALSE(IsCostlyReusedStage(f.initial, *stage));
  EXPECT_TRUE(IsCostlyWindowReusedStage(f.initial, *stage));
  auto out = InlineElementwise().Apply(f.Fresh(), pad, f.context);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  const TracedSchedule& kept = *(*out)[0];
  const TracedSchedule& inlined = *(*out)[1];
  EXPECT_NE(kept.program().FindBlock(pad), nullptr);
  EXPECT_EQ(testing::CountInstructions(kept.trace(), "compute_inline"), 0);
  EXPECT_EQ(inlined.program().FindBlock(pad), nullptr);
  EXPECT_EQ(testing::CountInstructions(inlined.trace(), "compute_inline"), 1);
  for (const TracedSchedule* sch : {&kept, &inlined}) {
    absl::Status checked =
        CheckProgram(f.workload, sch->program(), HostTarget(1));
    EXPECT_TRUE(checked.ok()) << checked;
  }
}

TEST(InlineElementwise, BranchesOnPoolingPadding) {
  ExpectBranchesOnWindowPadding(
      "max_pool2d:N=1,C=2,H=7,W=7,R=3,S=3,stride=2,pad=1", "pad");
}

TEST(InlineElementwise, BranchesOnDepthwisePadding) {
  ExpectBranchesOnWindowPadding(
      "custom:input X[1,4,9,9]; input W[4,3,3]; "
      "Y[n,c,h,w] += X?[n,c,h+r-1,w+s-1] * W[c,r,s]|n=1,c=4,h=9,w=9,r=3,s=3",
      "X_pad");
}

TEST(InlineElementwise, BranchesOnAMathStageWithTwoReaders) {
  // Softmax's exp(x - max), read by the row sum and by the division: inlined
  // it is computed twice per element, kept once; the search decides.
  RuleFixture f(
      "custom:input X[4,16]; M[i] max= X[i,k]; E[i,j] = exp(X[i,j] - M[i]); "
      "S[i] += E[i,k]; Y[i,j] = E[i,j] / S[i]|i=4,j=16,k=16");
  ASSERT_NE(f.initial.FindBlock("E"), nullptr) << PrintProgram(f.initial);
  EXPECT_TRUE(IsCostlySharedStage(f.initial, *f.initial.FindBlock("E")));
  auto out = InlineElementwise().Apply(f.Fresh(), "E", f.context);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_NE((*out)[0]->program().FindBlock("E"), nullptr);
  EXPECT_EQ((*out)[1]->program().FindBlock("E"), nullptr);
  for (const auto& sch : *out) {
    absl::Status checked =
        CheckProgram(f.workload, sch->program(), HostTarget(1));
    EXPECT_TRUE(checked.ok()) << checked;
  }
  // For GPUs it is inlined.
  auto gpu = InlineElementwise(false, InlineElementwise::WindowReuse::kInline)
                 .Apply(f.Fresh(), "E", f.context);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  ASSERT_EQ(gpu->size(), 1u);
  EXPECT_EQ(gpu->front()->program().FindBlock("E"), nullptr);
  // A cheap stage with two readers is inlined as before.
  RuleFixture cheap(
      "custom:input X[4,16]; E[i,j] = X[i,j] * 2; S[i] += E[i,k]; "
      "Y[i,j] = E[i,j] / S[i]|i=4,j=16,k=16");
  EXPECT_FALSE(
      IsCostlySharedStage(cheap.initial, *cheap.initial.FindBlock("E")));
  auto inlined = InlineElementwise().Apply(cheap.Fresh(), "E", cheap.context);
  ASSERT_TRUE(inlined.ok()) << inlined.status();
  ASSERT_EQ(inlined->size(), 1u);
  EXPECT_EQ(inlined->front()->program().FindBlock("E"), nullptr);
}

TEST(InlineElementwise, KeepsAMathStageThatAReductionReuses) {
  // exp(A[i,k]) read for every j: inlined it would run N times per element.
  RuleFixture costly(
      "custom:T[i,k] = exp(A[i,k]); C[i,j] += T[i,k] * B[k,j]|i=4,j=5,k=6");
  std::unique_ptr<TracedSchedule> kept = InlineAll(costly, InlineElementwise());
  EXPECT_NE(kept->program().FindBlock("T"), nullptr);
  // A product is no dearer than the load it replaces: inlined.
  RuleFixture cheap(
      "custom:T[i,k] = A[i,k] * 2; C[i,j] += T[i,k] * B[k,j]|i=4,j=5,k=6");
  std::unique_ptr<TracedSchedule> inlined =
      InlineAll(cheap, InlineElementwise());
  EXPECT_EQ(inlined->program().FindBlock("T"), nullptr);
  absl::Status checked =
      CheckProgram(cheap.workload, inlined->program(), HostTarget(1));
  EXPECT_TRUE(checked.ok()) << checked;
}

TEST(InlineElementwise, LeavesReductionsAndOutputsAlone) {
  RuleFixture f("softmax:M=3,N=7");
  std::unique_ptr<TracedSchedule> sch = InlineAll(f, InlineElementwise());
  EXPECT_TRUE(StructuralEqual(sch->program(), f.initial));
  EXPECT_TRUE(sch->trace().instructions.empty());
}

}  // namespace
}  // namespace lathe::tuner
