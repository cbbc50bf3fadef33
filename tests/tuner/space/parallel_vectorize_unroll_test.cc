// Tests of the ParallelVectorizeUnroll rule
// (tuner/space/parallel_vectorize_unroll.h).
#include "tuner/space/parallel_vectorize_unroll.h"

#include <gtest/gtest.h>

#include "compiler/codegen/cpu_target.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "tests/tuner/space/space_test_util.h"
#include "tuner/space/block_nest.h"

namespace lathe::tuner {
namespace {

using testing::CheckProgram;
using testing::CheckSpacePoint;
using testing::LoopsOfKind;
using testing::RuleFixture;

// A target of this machine with 16 float lanes forced, so that the expected
// splits do not depend on the CPU (code is compiled for the host).
Target Lanes16(int threads) {
  Target t = HostTarget(threads);
  if (t.VectorLanesF32() != 16) t.features.push_back("+avx512f");
  return t;
}

std::unique_ptr<TracedSchedule> ApplyTo(
    const RuleFixture& f, const std::string& block,
    const ParallelVectorizeUnroll& rule = {}) {
  auto out = rule.Apply(f.Fresh(), block, f.context);
  EXPECT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->size(), 1u);
  return std::move(out->front());
}

class PVU : public ::testing::Test {
 protected:
  void SetUp() override {
    if (HostTarget(1).VectorLanesF32() != 16)
      GTEST_SKIP() << "needs AVX-512 to run 16 lanes";
  }
};

TEST_F(PVU, ElementwiseGetsParallelOuterAndVectorInner) {
  RuleFixture f("relu:M=64,N=64", Lanes16(2));
  std::unique_ptr<TracedSchedule> sch = ApplyTo(f, "Y");
  const Program& p = sch->program();
  // 64 rows already give 2 threads x 16 jobs: the rows alone run in parallel.
  auto parallel = LoopsOfKind(p, ForKind::kParallel);
  ASSERT_EQ(parallel.size(), 1u) << PrintProgram(p);
  EXPECT_EQ(parallel[0]->extent, 64);
  auto vector = LoopsOfKind(p, ForKind::kVectorized);
  ASSERT_EQ(vector.size(), 1u);
  EXPECT_EQ(vector[0]->extent, 16);
  // The 4 vectors of a row: a sampled unroll.
  EXPECT_EQ(testing::CountInstructions(sch->trace(), "sample_perfect_tile"), 1);
  EXPECT_EQ(testing::CountInstructions(sch->trace(), "unroll"), 1);
  EXPECT_TRUE(CheckProgram(f.workload, p, HostTarget(2)).ok());
}

TEST_F(PVU, FusesShortOuterLoopsUntilThereIsEnoughWork) {
  // 2 rows x 4 vectors of 10: fused into 8 parallel iterations.
  RuleFixture f("relu:M=2,N=40", Lanes16(2));
  std::unique_ptr<TracedSchedule> sch = ApplyTo(f, "Y");
  const Program& p = sch->program();
  EXPECT_EQ(testing::CountInstructions(sch->trace(), "fuse"), 1);
  auto parallel = LoopsOfKind(p, ForKind::kParallel);
  ASSERT_EQ(parallel.size(), 1u) << PrintProgram(p);
  EXPECT_EQ(parallel[0]->extent, 8);
  auto vector = LoopsOfKind(p, ForKind::kVectorized);
  ASSERT_EQ(vector.size(), 1u);
  EXPECT_EQ(vector[0]->extent,
            10);  // a divisor of 40 of at least 8 lanes: no tail
  EXPECT_TRUE(CheckProgram(f.workload, p, HostTarget(2)).ok());
}

TEST_F(PVU, APrimeRowGetsAVectorTail) {
  RuleFixture f("relu:M=3,N=37", Lanes16(2));
  std::unique_ptr<TracedSchedule> sch = ApplyTo(f, "Y");
  auto vector = LoopsOfKind(sch->program(), ForKind::kVectorized);
  ASSERT_EQ(vector.size(), 1u);
  EXPECT_EQ(vector[0]->extent, 16);
  absl::Status checked =
      CheckProgram(f.workload, sch->program(), HostTarget(2));
  EXPECT_TRUE(checked.ok()) << checked;
}

TEST_F(PVU, OneThreadMeansNoParallelLoop) {
  RuleFixture f("relu:M=64,N=64", Lanes16(1));
  std::unique_ptr<TracedSchedule> sch = ApplyTo(f, "Y");
  EXPECT_TRUE(LoopsOfKind(sch->program(), ForKind::kParallel).empty());
  EXPECT_EQ(LoopsOfKind(sch->program(), ForKind::kVectorized).size(), 1u);
}

TEST_F(PVU, ReductionOverTheLastAxisIsNotVectorized) {
  // softmax's row max: the innermost loop is the reduction.
  RuleFixture f("softmax:M=64,N=32", Lanes16(2));
  std::unique_ptr<TracedSchedule> sch = ApplyTo(f, "row_max");
  EXPECT_TRUE(LoopsOfKind(sch->program(), ForKind::kVectorized).empty());
  auto parallel = LoopsOfKind(sch->program(), ForKind::kParallel);
  ASSERT_EQ(parallel.size(), 1u);
  EXPECT_EQ(parallel[0]->extent, 64);
  EXPECT_EQ(testing::CountInstructions(sch->trace(), "unroll"),
            1);  // of the row
}

TEST_F(PVU, ContiguousInnerLoopAfterAReductionIsVectorizedWithItsInit) {
  // rfactor over the inner part of softmax's row: rf[i, ki] = max over ko of
  // X[i, ko * 16 + ki], ki innermost and spatial, below the reduction ko.
  RuleFixture f("softmax:M=2,N=64", Lanes16(2));
  std::unique_ptr<TracedSchedule> sch = f.Fresh();
  auto loops = sch->GetLoops(sch->GetBlock("row_max").value()).value();
  auto parts = sch->Split(loops[1], {Factor{}, Factor{int64_t{16}}}).value();
  const std::string rf =
      sch->BlockName(sch->RFactor(parts[1], 1).value()).value();
  ParallelVectorizeUnroll rule;
  auto out = rule.Apply(std::move(sch), rf, f.context);
  ASSERT_TRUE(out.ok()) << out.status();
  sch = std::move(out->front());
  EXPECT_EQ(testing::CountInstructions(sch->trace(), "decompose_reduction"), 1)
      << sch->trace().ToText();
  // The update's lanes and the init's lanes.
  auto vector = LoopsOfKind(sch->program(), ForKind::kVectorized);
  ASSERT_EQ(vector.size(), 2u) << PrintProgram(sch->program());
  EXPECT_EQ(vector[0]->extent, 16);
  EXPECT_EQ(vector[1]->extent, 16);
  absl::Status checked =
      CheckProgram(f.workload, sch->program(), HostTarget(2));
  EXPECT_TRUE(checked.ok()) << checked;
}

TEST_F(PVU, TheUnrollFactorIsSampled) {
  RuleFixture f("relu:M=64,N=64", Lanes16(2));
  std::unique_ptr<TracedSchedule> sch = ApplyTo(f, "Y");
  std::set<int64_t> unrolled;
  for (uint64_t seed = 0; seed < 24; ++seed) {
    auto sampled = ReplayTrace(sch->trace(), f.initial, Decisions{}, seed);
    ASSERT_TRUE(sampled.ok()) << sampled.status();
    auto loops = LoopsOfKind((*sampled)->program(), ForKind::kUnrolled);
    ASSERT_EQ(loops.size(), 1u);
    unrolled.insert(loops[0]->extent);
    ASSERT_TRUE(
        CheckSpacePoint(f.workload, sch->trace(), HostTarget(2), seed).ok());
  }
  EXPECT_EQ(unrolled,
            (std::set<int64_t>{1, 2, 4}));  // the divisors of 4 vectors
}

TEST_F(PVU, SkipsTiledAndMovedBlocks) {
  RuleFixture f("relu:M=64,N=64", Lanes16(2));
  ParallelVectorizeUnroll rule;
  std::unique_ptr<TracedSchedule> tiled = f.Fresh();
  ASSERT_TRUE(tiled
                  ->AnnotateBlock(tiled->GetBlock("Y").value(),
                                  kTiledAnnotation, int64_t{1})
                  .ok());
  const size_t before = tiled->trace().instructions.size();
  auto out = rule.Apply(std::move(tiled), "Y", f.context);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->front()->trace().instructions.size(), before);

  std::unique_ptr<TracedSchedule> split = f.Fresh();
  auto loops = split->GetLoops(split->GetBlock("Y").value()).value();
  ASSERT_TRUE(split->Split(loops[0], {Factor{}, Factor{int64_t{8}}}).ok());
  const size_t split_before = split->trace().instructions.size();
  out = rule.Apply(std::move(split), "Y", f.context);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->front()->trace().instructions.size(), split_before);
}

}  // namespace
}  // namespace lathe::tuner
