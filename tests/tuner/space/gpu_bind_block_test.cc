// Tests of the GpuBindBlock rule (tuner/space/gpu_bind_block.h): every block
// of a cuda target it visits ends up bound, computing what the workload
// does; CPU targets and blocks already under bound loops are left alone.
#include "tuner/space/gpu_bind_block.h"

#include <gtest/gtest.h>

#include "compiler/codegen/cuda/cuda_target.h"
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

}  // namespace
}  // namespace lathe::tuner
