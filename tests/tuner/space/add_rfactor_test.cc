// Tests of the AddRFactor rule (tuner/space/add_rfactor.h).
#include "tuner/space/add_rfactor.h"

#include <gtest/gtest.h>

#include "compiler/codegen/cpu_target.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "tests/tuner/space/space_test_util.h"
#include "tuner/space/design_space.h"
#include "tuner/space/parallel_vectorize_unroll.h"

namespace lathe::tuner {
namespace {

using testing::CheckSpacePoint;
using testing::LoopsOfKind;
using testing::RuleFixture;

// The block rfactor created, if any: a block that the initial program does
// not have and that writes a buffer the initial program does not have.
const BlockNode* RFactorBlock(const Program& p, const Program& initial) {
  for (const BlockNode* b : p.Blocks()) {
    if (initial.FindBlock(b->name) == nullptr) return b;
  }
  return nullptr;
}

TEST(AddRFactor, BranchesOnALongRowReduction) {
  RuleFixture f("softmax:M=2,N=256", HostTarget(2));
  AddRFactor rule;
  auto out = rule.Apply(f.Fresh(), "row_max", f.context);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);  // outer part, inner part, unchanged
  for (int branch = 0; branch < 2; ++branch) {
    const Program& p = (*out)[branch]->program();
    const BlockNode* rf = RFactorBlock(p, f.initial);
    ASSERT_NE(rf, nullptr) << PrintProgram(p);
    EXPECT_EQ(testing::CountInstructions((*out)[branch]->trace(), "rfactor"),
              1);
    EXPECT_EQ(testing::CountInstructions((*out)[branch]->trace(),
                                         "sample_perfect_tile"),
              1);
    // Its partial results get the split part as their last dimension.
    const BlockAccesses accesses = AccessesOf(*rf);
    ASSERT_FALSE(accesses.writes.empty());  // the init's store and the update's
    for (const BufferAccess& w : accesses.writes)
      EXPECT_EQ(w.buffer, accesses.writes[0].buffer);
    EXPECT_EQ(accesses.writes[0].buffer->shape.size(), 2u);
    EXPECT_EQ(accesses.writes[0].buffer->shape[0], 2);
  }
  EXPECT_TRUE(StructuralEqual((*out)[2]->program(), f.initial));
  EXPECT_TRUE((*out)[2]->trace().instructions.empty());
}

TEST(AddRFactor, LeavesReductionsWithEnoughSpatialWorkAlone) {
  RuleFixture f("matmul:M=64,N=64,K=64", HostTarget(2));
  AddRFactor rule;
  auto out = rule.Apply(f.Fresh(), "C", f.context);
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->size(), 1u);
  EXPECT_TRUE(out->front()->trace().instructions.empty());

  RuleFixture y("softmax:M=2,N=256", HostTarget(2));  // not a reduction
  out = rule.Apply(y.Fresh(), "Y", y.context);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->size(), 1u);
}

TEST(AddRFactor, MatrixVectorBranchesGoParallelAndVectorized) {
  // With ParallelVectorizeUnroll after it: the outer branch runs the partial
  // sums in parallel, the inner one vectorizes them.
  RuleFixture f("custom:y[i] += A[i,k] * x[k]|i=3,k=512", HostTarget(2));
  std::vector<std::unique_ptr<ScheduleRule>> rules;
  rules.push_back(std::make_unique<AddRFactor>());
  rules.push_back(std::make_unique<ParallelVectorizeUnroll>());
  auto spaces = GenerateDesignSpaces(f.workload, f.context.target, rules);
  ASSERT_TRUE(spaces.ok()) << spaces.status();
  ASSERT_EQ(spaces->size(), 3u);
  int parallel_rf = 0, vector_rf = 0;
  for (const Trace& space : *spaces) {
    for (uint64_t seed = 0; seed < 6; ++seed) {
      absl::Status checked =
          CheckSpacePoint(f.workload, space, HostTarget(2), seed);
      ASSERT_TRUE(checked.ok()) << checked;
    }
    auto sampled = ReplayTrace(space, f.initial, Decisions{}, 1).value();
    const BlockNode* rf = RFactorBlock(sampled->program(), f.initial);
    if (rf == nullptr) continue;
    for (const ForNode* loop : sampled->program().LoopsAbove(rf)) {
      parallel_rf += loop->for_kind == ForKind::kParallel;
      vector_rf += loop->for_kind == ForKind::kVectorized;
    }
  }
  EXPECT_GE(parallel_rf, 1);
  EXPECT_GE(vector_rf, 1);
}

}  // namespace
}  // namespace lathe::tuner
