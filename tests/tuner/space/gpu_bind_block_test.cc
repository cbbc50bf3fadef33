// Tests of the GpuBindBlock rule (tuner/space/gpu_bind_block.h): every block
// of a cuda target it visits ends up bound, computing what the workload
// does, with its thread counts sampled; CPU targets and blocks already under
// bound loops are left alone.
#include "tuner/space/gpu_bind_block.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/schedule/replay.h"
#include "tests/compiler/schedule/same_result.h"
#include "tests/tuner/space/space_test_util.h"
#include "tuner/space/gpu_shared_tiling.h"

namespace lathe::tuner {
namespace {

using testing::LoopsOfKind;
using testing::RuleFixture;

Target Sm80() { return cuda::ArchTarget("sm_80").value(); }

// Applies `rule` to every block, last to first, as GenerateDesignSpaces
// does.
std::unique_ptr<TracedSchedule> ApplyAll(const RuleFixture& f,
                                         std::unique_ptr<TracedSchedule> sch,
                                         const ScheduleRule& rule) {
  std::vector<std::string> names;
  for (const BlockNode* b : sch->program().Blocks()) names.push_back(b->name);
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    if (sch->program().FindBlock(*it) == nullptr) continue;
    auto out = rule.Apply(std::move(sch), *it, f.context);
    EXPECT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->size(), 1u);
    sch = std::move(out->front());
  }
  return sch;
}

// Whether every block of `program` sits under a loop bound to a block or a
// thread (a cross-thread reduction's final sum is under its block loop
// only: thread 0 stores it).
bool EveryBlockBound(const Program& program) {
  for (const BlockNode* b : program.Blocks()) {
    bool bound = false;
    for (const ForNode* loop : program.LoopsAbove(b))
      bound |= loop->for_kind == ForKind::kThreadBinding;
    if (!bound) return false;
  }
  return true;
}

TEST(GpuBindBlock, BindsEveryBlockOfSoftmax) {
  RuleFixture f("softmax:M=6,N=200", Sm80());
  std::unique_ptr<TracedSchedule> sch = ApplyAll(f, f.Fresh(), GpuBindBlock());
  EXPECT_TRUE(EveryBlockBound(sch->program())) << PrintProgram(sch->program());
  absl::StatusOr<Program> lowered = LowerProgram(sch->program());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_TRUE(lathe::testing::CheckSameResult(f.initial, *lowered).ok());
}

TEST(GpuBindBlock, LeavesCpuTargetsAlone) {
  RuleFixture f("softmax:M=6,N=200");
  EXPECT_TRUE(
      ApplyAll(f, f.Fresh(), GpuBindBlock())->trace().instructions.empty());
}

TEST(GpuBindBlock, LeavesTheTiledBlockAndItsCachesAlone) {
  RuleFixture f("matmul:M=64,N=64,K=32", Sm80());
  std::unique_ptr<TracedSchedule> tiled =
      ApplyAll(f, f.Fresh(), GpuSharedTiling());
  const size_t before = tiled->trace().instructions.size();
  ASSERT_GT(before, 0u);
  std::unique_ptr<TracedSchedule> sch =
      ApplyAll(f, std::move(tiled), GpuBindBlock());
  EXPECT_EQ(sch->trace().instructions.size(), before);
  EXPECT_TRUE(EveryBlockBound(sch->program()));
}

// The threadIdx.x extents of `program`'s bound loops, in program order.
std::vector<int64_t> ThreadExtents(const Program& program) {
  std::vector<int64_t> extents;
  for (const ForNode* loop : LoopsOfKind(program, ForKind::kThreadBinding))
    if (loop->thread_tag == "threadIdx.x") extents.push_back(loop->extent);
  return extents;
}

// Points of the rule's space for `f` (its decisions drawn again by seeds
// 1..points): each computes what the workload does; returns the distinct
// thread extents they have.
std::set<std::vector<int64_t>> SampledThreads(const RuleFixture& f,
                                              int points) {
  std::unique_ptr<TracedSchedule> sch = ApplyAll(f, f.Fresh(), GpuBindBlock());
  Trace space = sch->trace();
  space.decisions.clear();
  std::set<std::vector<int64_t>> seen;
  for (int seed = 1; seed <= points; ++seed) {
    absl::StatusOr<std::unique_ptr<TracedSchedule>> point =
        ReplayTrace(space, f.initial, {}, static_cast<uint64_t>(seed));
    if (!point.ok()) {
      ADD_FAILURE() << point.status();
      continue;
    }
    EXPECT_TRUE(EveryBlockBound((*point)->program()));
    absl::StatusOr<Program> lowered = LowerProgram((*point)->program());
    if (!lowered.ok()) {
      ADD_FAILURE() << lowered.status();
      continue;
    }
    EXPECT_TRUE(lathe::testing::CheckSameResult(f.initial, *lowered).ok())
        << (*point)->trace().ToText();
    seen.insert(ThreadExtents((*point)->program()));
  }
  return seen;
}

TEST(GpuBindBlock, SamplesTheThreadsPerBlockOfAnElementwiseBlock) {
  // 16 x 40 = 640 outputs: 32 ... 512 threads a block (tails guarded), or
  // all 640 in one block.
  RuleFixture f("add:M=16,N=40", Sm80());
  std::unique_ptr<TracedSchedule> sch = ApplyAll(f, f.Fresh(), GpuBindBlock());
  ASSERT_EQ(testing::CountInstructions(sch->trace(), "sample_categorical"), 1);
  EXPECT_EQ(sch->trace().instructions.front().kind, "get_block");
  std::set<int64_t> threads;
  for (const std::vector<int64_t>& extents : SampledThreads(f, 40)) {
    ASSERT_EQ(extents.size(), 1u);
    threads.insert(extents.front());
  }
  // Every candidate is reached (fixed seeds), none else.
  EXPECT_EQ(threads, (std::set<int64_t>{32, 64, 128, 256, 512, 640}));
}

TEST(GpuBindBlock, SamplesTheThreadsOfACrossThreadReduction) {
  // Two rows of 1024: the max and the sum each shared by 32 ... 1024
  // threads, the divisors of 1024 that are multiples of 32.
  RuleFixture f("softmax:M=2,N=1024", Sm80());
  std::unique_ptr<TracedSchedule> sch = ApplyAll(f, f.Fresh(), GpuBindBlock());
  EXPECT_GE(testing::CountInstructions(sch->trace(), "sample_categorical"), 2);
  std::set<int64_t> reduction_threads;
  for (const std::vector<int64_t>& extents : SampledThreads(f, 24)) {
    for (int64_t t : extents) reduction_threads.insert(t);
  }
  // Every candidate is reached (fixed seeds), the one-block draw included.
  EXPECT_EQ(reduction_threads,
            (std::set<int64_t>{32, 64, 128, 256, 512, 1024}));
}

TEST(GpuBindBlock, SamplesTheUnrollDepthOfAThreadsSerialReduction) {
  // A depthwise convolution: a reduction of 3 x 3 per output, too short to
  // share among threads or to tile; each thread accumulates its output
  // over r and s, the innermost (s) split by a sampled factor whose inner
  // part is unrolled.
  RuleFixture f("conv2d_nchw:N=1,C=16,H=20,W=20,K=16,R=3,S=3,pad=1,groups=16",
                Sm80());
  std::unique_ptr<TracedSchedule> sch = ApplyAll(f, f.Fresh(), GpuBindBlock());
  ASSERT_EQ(testing::CountInstructions(sch->trace(), "sample_perfect_tile"), 1)
      << sch->trace().ToText();
  Trace space = sch->trace();
  space.decisions.clear();
  std::set<int64_t> unrolled;  // the extents of the unrolled loops
  for (int seed = 1; seed <= 12; ++seed) {
    absl::StatusOr<std::unique_ptr<TracedSchedule>> point =
        ReplayTrace(space, f.initial, {}, static_cast<uint64_t>(seed));
    ASSERT_TRUE(point.ok()) << point.status();
    const std::vector<const ForNode*> loops =
        LoopsOfKind((*point)->program(), ForKind::kUnrolled);
    ASSERT_EQ(loops.size(), 1u) << PrintProgram((*point)->program());
    unrolled.insert(loops.front()->extent);
    absl::StatusOr<Program> lowered = LowerProgram((*point)->program());
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    EXPECT_TRUE(lathe::testing::CheckSameResult(f.initial, *lowered).ok());
  }
  EXPECT_EQ(unrolled, (std::set<int64_t>{1, 3}));
}

TEST(GpuBindBlock, SamplesNothingForAFewOutputs) {
  // 4 x 8 = 32 outputs: one block of them, as the default schedule does.
  RuleFixture f("add:M=4,N=8", Sm80());
  std::unique_ptr<TracedSchedule> sch = ApplyAll(f, f.Fresh(), GpuBindBlock());
  EXPECT_EQ(testing::CountInstructions(sch->trace(), "sample_categorical"), 0);
  EXPECT_EQ(ThreadExtents(sch->program()), std::vector<int64_t>{32});
}

}  // namespace
}  // namespace lathe::tuner
