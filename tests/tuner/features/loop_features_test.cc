// Tests of the loop feature group (tuner/features/loop_features.h).
#include "tuner/features/loop_features.h"

#include <gtest/gtest.h>

#include "compiler/schedule/schedule.h"
#include "tests/tuner/features/features_test_util.h"

namespace lathe::tuner {
namespace {

using testing::GroupRow;
using testing::RowOf;

GroupRow LoopRow(const StoreContext& store) {
  return RowOf(LoopFeatureSpecs(), store, ExtractLoopFeatures);
}

// for i (16) parallel: for j0 (2): for k (16): for i1 (4) unrolled:
//   for j1 (8) vectorized: C[i, j0 * 8 + j1] += A[i, k] * B[k, j0 * 8 + j1]
// (i1 recomputes the same element: a contrived unroll that keeps the
// numbers easy).
Program HandScheduledMatmul() {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {16, 16});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {16, 16});
  BufferPtr c = MakeBuffer("C", DType::Float32(), {16, 16});
  Expr i = Var("i"), j0 = Var("j0"), k = Var("k"), i1 = Var("i1"),
       j1 = Var("j1");
  Expr col = j0 * 8 + j1;
  StmtPtr store = MakeStore(
      c, {i, col}, Load(c, {i, col}) + Load(a, {i, k}) * Load(b, {k, col}));
  auto inner = MakeFor(j1, 8, std::move(store), ForKind::kVectorized);
  auto unrolled = MakeFor(i1, 4, std::move(inner), ForKind::kUnrolled);
  auto reduce = MakeFor(k, 16, std::move(unrolled));
  reduce->annotations[kAutoUnrollMaxStep] = int64_t{64};
  return testing::MakeProgram(
      {a, b}, {c},
      MakeFor(i, 16, MakeFor(j0, 2, std::move(reduce)), ForKind::kParallel));
}

TEST(LoopFeatures, ReadsLengthsOfEachLoopKind) {
  Program p = HandScheduledMatmul();
  GroupRow row = LoopRow(WalkProgram(p).stores[0]);
  EXPECT_EQ(row["loop.depth"], 5);
  EXPECT_EQ(row["loop.executions"], 16 * 2 * 16 * 4 * 8);
  EXPECT_EQ(row["loop.innermost_extent"], 8);
  EXPECT_EQ(row["loop.vector_length"], 8);
  EXPECT_EQ(row["loop.vector_product"], 8);
  EXPECT_EQ(row["loop.vector_innermost"], 1);
  EXPECT_EQ(row["loop.parallel_product"], 16);
  EXPECT_EQ(row["loop.parallel_count"], 1);
  EXPECT_EQ(row["loop.parallel_outermost"], 1);
  EXPECT_EQ(row["loop.parallel_grain"], 2 * 16 * 4 * 8);
  EXPECT_EQ(row["loop.unroll_product"], 4);
  EXPECT_EQ(row["loop.unroll_count"], 1);
  EXPECT_EQ(row["loop.auto_unroll_max_step"], 64);
  EXPECT_EQ(row["loop.annotated"], 1);
  EXPECT_EQ(row["loop.serial_product"], 2 * 16);
  EXPECT_EQ(row["loop.thread_product"], 1);
  // k and i1 leave the written element alone.
  EXPECT_EQ(row["loop.write_invariant_product"], 16 * 4);
  EXPECT_EQ(row["loop.guards"], 0);
  EXPECT_EQ(row["loop.guard_fraction"], 1);
}

TEST(LoopFeatures, ScalarSerialNestHasNoVectorOrParallelLength) {
  testing::MatmulNest mm(16);
  GroupRow row = LoopRow(WalkProgram(mm.program).stores[0]);
  EXPECT_EQ(row["loop.vector_length"], 0);
  EXPECT_EQ(row["loop.vector_innermost"], 0);
  EXPECT_EQ(row["loop.parallel_product"], 1);
  EXPECT_EQ(row["loop.parallel_outermost"], 0);
  EXPECT_EQ(row["loop.parallel_grain"], 4096);
  EXPECT_EQ(row["loop.unroll_product"], 1);
  EXPECT_EQ(row["loop.serial_product"], 4096);
  EXPECT_EQ(row["loop.write_invariant_product"], 16);
}

TEST(LoopFeatures, SeesWhatTheScheduleChoseAfterLowering) {
  // Split j by 8 and vectorize it, parallelize i, unroll k by 4.
  ConcreteSchedule sch(testing::InitialProgramOf("matmul:M=16,N=16,K=16"));
  BlockRV block = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(block).value();
  std::vector<LoopRV> j =
      sch.Split(loops[1], {Factor(), Factor(int64_t{8})}).value();
  std::vector<LoopRV> k =
      sch.Split(loops[2], {Factor(), Factor(int64_t{4})}).value();
  ASSERT_TRUE(sch.Reorder({loops[0], j[0], k[0], k[1], j[1]}).ok());
  ASSERT_TRUE(sch.Vectorize(j[1]).ok());
  ASSERT_TRUE(sch.Parallel(loops[0]).ok());
  ASSERT_TRUE(sch.Unroll(k[1]).ok());
  Program lowered = testing::Lower(sch.program());
  ProgramWalk walk = WalkProgram(lowered);
  const StoreContext* update = nullptr;
  for (const StoreContext& s : walk.stores) {
    if (s.guards.empty()) update = &s;
  }
  ASSERT_NE(update, nullptr) << PrintProgram(lowered);
  GroupRow row = LoopRow(*update);
  EXPECT_EQ(row["loop.vector_length"], 8) << PrintProgram(lowered);
  EXPECT_EQ(row["loop.parallel_product"], 16);
  EXPECT_EQ(row["loop.unroll_product"], 4);
  EXPECT_EQ(row["loop.depth"], 5);
  EXPECT_EQ(row["loop.executions"], 4096);
}

TEST(LoopFeatures, CountsGuardsAndTheirShare) {
  Program lowered =
      testing::Lower(testing::InitialProgramOf("matmul:M=16,N=16,K=16"));
  GroupRow init = LoopRow(WalkProgram(lowered).stores[0]);
  EXPECT_EQ(init["loop.guards"], 1);
  EXPECT_EQ(init["loop.guard_fraction"], 1.0 / 16);
  EXPECT_EQ(init["loop.executions"], 256);
}

}  // namespace
}  // namespace lathe::tuner
