// Tests of the per-store walk (tuner/features/store_context.h).
#include "tuner/features/store_context.h"

#include <gtest/gtest.h>

#include "tests/tuner/features/features_test_util.h"

namespace lathe::tuner {
namespace {

using testing::DefaultLowered;
using testing::InitialProgramOf;
using testing::Lower;
using testing::MatmulNest;

TEST(StoreContext, GivesTheLoopNestExecutionsAndBuffersOfAStore) {
  MatmulNest mm(16);
  ProgramWalk walk = WalkProgram(mm.program);
  ASSERT_EQ(walk.stores.size(), 1u);
  const StoreContext& s = walk.stores[0];
  ASSERT_EQ(s.loops.size(), 3u);
  EXPECT_EQ(s.loops[0].loop->var->name, "i");
  EXPECT_EQ(s.loops[2].loop->var->name, "k");
  EXPECT_EQ(s.loops[2].extent, 16);
  EXPECT_DOUBLE_EQ(s.executions, 16.0 * 16 * 16);
  EXPECT_DOUBLE_EQ(s.guard_fraction, 1);
  ASSERT_EQ(s.buffers.size(), 3u);
  // The written buffer comes first; its read in the value merges into it.
  EXPECT_EQ(s.buffers[0].buffer, mm.c);
  EXPECT_TRUE(s.buffers[0].write);
  EXPECT_TRUE(s.buffers[0].read);
  EXPECT_EQ(s.buffers[0].num_accesses, 2);
  EXPECT_EQ(s.buffers[0].index_tuples.size(), 1u);
  EXPECT_EQ(s.buffers[1].buffer, mm.a);
  EXPECT_EQ(s.buffers[2].buffer, mm.b);
  EXPECT_FALSE(s.buffers[1].write);
  EXPECT_EQ(walk.num_loops, 3);
  EXPECT_EQ(walk.num_loop_nests, 1);
  EXPECT_EQ(walk.parallel_launches, 0);
  EXPECT_TRUE(walk.allocations.empty());
}

TEST(StoreContext, GuardOfAnInitRunsItOncePerOutputElement) {
  // Unscheduled matmul: `if k == 0: C[i, j] = 0` inside the k loop.
  Program lowered = Lower(InitialProgramOf("matmul:M=16,N=16,K=16"));
  ProgramWalk walk = WalkProgram(lowered);
  ASSERT_EQ(walk.stores.size(), 2u) << PrintProgram(lowered);
  const StoreContext& init = walk.stores[0];
  ASSERT_EQ(init.guards.size(), 1u);
  EXPECT_DOUBLE_EQ(init.guard_fraction, 1.0 / 16);
  EXPECT_DOUBLE_EQ(init.executions, 16.0 * 16);
  EXPECT_DOUBLE_EQ(walk.stores[1].executions, 16.0 * 16 * 16);
  EXPECT_TRUE(walk.stores[1].guards.empty());
}

TEST(StoreContext, ElseBranchGetsTheComplementShare) {
  BufferPtr y = MakeBuffer("Y", DType::Float32(), {8});
  Expr i = Var("i");
  StmtPtr body = MakeFor(i, 8,
                         MakeIf(i < 2, MakeStore(y, {i}, Expr(1.0)),
                                MakeStore(y, {i}, Expr(2.0))));
  Program p = testing::MakeProgram({}, {y}, std::move(body));
  ProgramWalk walk = WalkProgram(p);
  ASSERT_EQ(walk.stores.size(), 2u);
  EXPECT_DOUBLE_EQ(walk.stores[0].executions, 2);
  EXPECT_DOUBLE_EQ(walk.stores[1].executions, 6);
}

TEST(StoreContext, RecordsAllocationsWithTheLoopsAboveThem) {
  Program lowered = DefaultLowered("matmul:M=16,N=16,K=16", /*vector_width=*/8);
  ProgramWalk walk = WalkProgram(lowered);
  // for i_0 (2) parallel: for j_0 (2): alloc C_local[8, 8] local
  ASSERT_EQ(walk.allocations.size(), 1u) << PrintProgram(lowered);
  const AllocationSite& site = walk.allocations[0];
  EXPECT_EQ(site.buffer->name, "C_local");
  ASSERT_EQ(site.loops.size(), 2u);
  EXPECT_EQ(site.loops[0].kind, ForKind::kParallel);
  EXPECT_DOUBLE_EQ(site.executions, 4);
  EXPECT_EQ(walk.parallel_launches, 1);
  ASSERT_EQ(walk.stores.size(), 3u);  // init, update, write-back
  for (const StoreContext& s : walk.stores) {
    EXPECT_TRUE(s.buffers[0].buffer->name == "C_local" ||
                s.buffers[0].buffer->name == "C");
  }
  EXPECT_TRUE(walk.stores[1].buffers[0].allocated);   // C_local
  EXPECT_FALSE(walk.stores[2].buffers[0].allocated);  // C, a parameter
  EXPECT_EQ(walk.stores[1].loops.size(), 5u);
  EXPECT_DOUBLE_EQ(walk.stores[1].executions, 16.0 * 16 * 16);
}

TEST(StoreContext, ParallelLaunchesCountExecutionsOfEachParallelLoop) {
  BufferPtr y = MakeBuffer("Y", DType::Float32(), {4, 8});
  Expr i = Var("i"), j = Var("j");
  StmtPtr body = MakeFor(
      i, 4, MakeFor(j, 8, MakeStore(y, {i, j}, Expr(0.0)), ForKind::kParallel));
  Program p = testing::MakeProgram({}, {y}, std::move(body));
  ProgramWalk walk = WalkProgram(p);
  EXPECT_EQ(walk.parallel_launches,
            4);  // the inner parallel loop forks 4 times
}

TEST(EstimateGuardFraction, IsExactForOneVariableAgainstAConstant) {
  Expr i = Var("i"), j = Var("j");
  VarRanges ranges = {{i.get(), Interval::Extent(16)},
                      {j.get(), Interval::Extent(16)}};
  EXPECT_DOUBLE_EQ(EstimateGuardFraction(i == 0, ranges), 1.0 / 16);
  EXPECT_DOUBLE_EQ(EstimateGuardFraction(i < 10, ranges), 10.0 / 16);
  EXPECT_DOUBLE_EQ(EstimateGuardFraction(i <= 9, ranges), 10.0 / 16);
  EXPECT_DOUBLE_EQ(EstimateGuardFraction(i >= 4, ranges), 12.0 / 16);
  EXPECT_DOUBLE_EQ(EstimateGuardFraction(i > 4, ranges), 11.0 / 16);
  EXPECT_DOUBLE_EQ(EstimateGuardFraction(i != 3, ranges), 15.0 / 16);
  EXPECT_DOUBLE_EQ(EstimateGuardFraction(i >= 4 && j == 0, ranges),
                   12.0 / 16 / 16);
  EXPECT_DOUBLE_EQ(EstimateGuardFraction(!(i < 4), ranges), 12.0 / 16);
  EXPECT_DOUBLE_EQ(EstimateGuardFraction(i < 8 || j < 8, ranges), 0.75);
  EXPECT_DOUBLE_EQ(EstimateGuardFraction(i < 100, ranges), 1);
  EXPECT_DOUBLE_EQ(EstimateGuardFraction(i < 0, ranges), 0);
  EXPECT_DOUBLE_EQ(EstimateGuardFraction(True(), ranges), 1);
}

TEST(EstimateGuardFraction, EstimatesATailGuardOverTheIndexRange) {
  // i_0 * 8 + i_1 < 1000 over i_0 in [0, 128), i_1 in [0, 8): 1000 of 1024.
  Expr i0 = Var("i_0"), i1 = Var("i_1");
  VarRanges ranges = {{i0.get(), Interval::Extent(128)},
                      {i1.get(), Interval::Extent(8)}};
  EXPECT_DOUBLE_EQ(EstimateGuardFraction(i0 * 8 + i1 < 1000, ranges),
                   1000.0 / 1024);
}

TEST(EstimateGuardFraction, AssumesWhatItCannotBoundHolds) {
  Expr i = Var("i"), unknown = Var("n");
  VarRanges ranges = {{i.get(), Interval::Extent(16)}};
  EXPECT_DOUBLE_EQ(EstimateGuardFraction(i < unknown, ranges), 1);
  BufferPtr x = MakeBuffer("X", DType::Float32(), {16});
  EXPECT_DOUBLE_EQ(EstimateGuardFraction(Load(x, {i}) > Expr(0.0), ranges), 1);
}

}  // namespace
}  // namespace lathe::tuner
