// Tests of the AddRFactor rule (tuner/space/add_rfactor.h).
#include "tuner/space/add_rfactor.h"

#include <gtest/gtest.h>

#include "compiler/codegen/cpu_target.h"
#include "compiler/ir/expr_functor.h"
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

TEST(AddRFactor, RowReductionsGetTheInnerBranch) {
  // 512 rows of 128: enough rows for the threads, but vectorized over rows
  // the loads would gather 128 floats apart. The rfactor over the inner
  // part of the row loads contiguously; with ParallelVectorizeUnroll its
  // partial results are computed in vectors.
  for (const char* spec :
       {"softmax:M=512,N=128",
        "custom:input X[128,256]; S[i,u] += X[i,k]|i=128,u=1,k=256"}) {
    SCOPED_TRACE(spec);
    RuleFixture f(spec, HostTarget(2));
    const std::string block = f.initial.Blocks().front()->name;
    auto out = AddRFactor().Apply(f.Fresh(), block, f.context);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 2u);  // inner part, unchanged
    const Program& p = (*out)[0]->program();
    const BlockNode* rf = RFactorBlock(p, f.initial);
    ASSERT_NE(rf, nullptr) << PrintProgram(p);
    // The partial results' last dimension (a spatial variable of the rfactor
    // block) walks the row contiguously: X's last index uses it, its first
    // does not.
    const BlockAccesses accesses = AccessesOf(*rf);
    ASSERT_FALSE(accesses.writes.empty());
    const int64_t lanes = accesses.writes[0].buffer->shape.back();
    EXPECT_GE(lanes, 2) << PrintProgram(p);
    bool contiguous = false;
    for (const IterVar& iv : rf->iter_vars) {
      if (iv.type != IterType::kSpatial || iv.extent != lanes) continue;
      for (const BufferAccess& read : accesses.reads) {
        contiguous |= read.buffer->name == "X" &&
                      UsesVar(read.indices.back(), iv.var) &&
                      !UsesVar(read.indices.front(), iv.var);
      }
    }
    EXPECT_TRUE(contiguous) << PrintProgram(p);
    EXPECT_TRUE(StructuralEqual((*out)[1]->program(), f.initial));

    std::vector<std::unique_ptr<ScheduleRule>> rules;
    rules.push_back(std::make_unique<AddRFactor>());
    rules.push_back(std::make_unique<ParallelVectorizeUnroll>());
    auto spaces = GenerateDesignSpaces(f.workload, HostTarget(2), rules);
    ASSERT_TRUE(spaces.ok()) << spaces.status();
    int vector_rf = 0;
    for (const Trace& space : *spaces) {
      for (uint64_t seed = 0; seed < 4; ++seed) {
        absl::Status checked =
            CheckSpacePoint(f.workload, space, HostTarget(2), seed);
        ASSERT_TRUE(checked.ok()) << checked;
        auto sampled = ReplayTrace(space, f.initial, Decisions{}, seed).value();
        const BlockNode* sampled_rf =
            RFactorBlock(sampled->program(), f.initial);
        if (sampled_rf == nullptr) continue;
        for (const ForNode* loop : sampled->program().LoopsAbove(sampled_rf))
          vector_rf += loop->for_kind == ForKind::kVectorized;
      }
    }
    EXPECT_GE(vector_rf, 1);
  }
}

TEST(AddRFactor, LeavesProductsColumnsAndShortRowsAlone) {
  for (const char* spec :
       {// A GEMM whose operands both run along k: reused across rows.
        "custom:C[i,j] += A[i,k] * B[j,k]|i=64,j=64,k=64",
        // A column sum: a vector over j loads contiguously already.
        "custom:y[j] += A[k,j]|j=64,k=64",
        // Rows shorter than a vector.
        "custom:y[i] += A[i,k]|i=64,k=4",
        // The row reduction strided by 2.
        "custom:input A[64,128]; y[i] += A[i,2*k]|i=64,k=64",
        // A convolution: its window walks w, a spatial variable too.
        "conv2d_nchw:N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1"}) {
    SCOPED_TRACE(spec);
    RuleFixture f(spec, HostTarget(2));
    for (const BlockNode* b : f.initial.Blocks()) {
      if (!b->IsReduction()) continue;
      auto out = AddRFactor().Apply(f.Fresh(), b->name, f.context);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->size(), 1u) << b->name;
    }
  }
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
