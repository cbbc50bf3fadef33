#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/schedule/primitive/loop_kind.h"
#include "compiler/schedule/traced_schedule.h"
#include "tests/compiler/schedule/same_result.h"
#include "tests/compiler/schedule/test_programs.h"
#include "tests/compiler/schedule/trace_round_trip.h"

namespace lathe {
namespace {

TEST(Parallel, AcceptsASpatialLoop) {
  Program initial = testing::MatmulProgram(7, 5, 3);
  TracedSchedule sch(initial);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  absl::Status s = sch.Parallel(loops[0]);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(sch.program().FindLoop("i")->for_kind, ForKind::kParallel);
  EXPECT_NE(PrintProgram(sch.program()).find("parallel"), std::string::npos);
  // Applying it again changes nothing.
  ASSERT_TRUE(sch.Parallel(loops[0]).ok());
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same;
  absl::Status trace = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trace.ok()) << trace;
}

TEST(Parallel, RejectsAReductionLoopNamingTheBlock) {
  TracedSchedule sch(testing::MatmulProgram(4, 5, 6));
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  std::string before = PrintProgram(sch.program());
  absl::Status s = sch.Parallel(loops[2]);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "parallel: loop \"k\" is not data-parallel: block \"C\" binds it "
            "to reduce "
            "iteration variable \"vk\"");
  EXPECT_EQ(PrintProgram(sch.program()), before);
  EXPECT_EQ(sch.trace().instructions.size(), 2u);  // get_block, get_loops
}

TEST(Parallel, AcceptsAFusedLoopAndATileLoop) {
  Program initial = testing::MatmulProgram(6, 7, 5);
  TracedSchedule sch(initial);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  std::vector<LoopRV> is =
      sch.Split(loops[0], {Factor(), Factor(int64_t{4})}).value();
  ASSERT_TRUE(sch.Reorder({is[0], loops[1], is[1]}).ok());
  LoopRV fused = sch.Fuse({is[0], loops[1]}).value();
  absl::Status s = sch.Parallel(fused);
  ASSERT_TRUE(s.ok()) << s << "\n" << PrintProgram(sch.program());
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same;
  absl::Status trace = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trace.ok()) << trace;
}

TEST(Parallel, AcceptsEveryStageOfAnElementwiseChain) {
  Program initial = testing::DenseBiasReluProgram(5, 3, 7);
  TracedSchedule sch(initial);
  for (const char* block : {"T_dense", "T_bias", "Y"}) {
    std::vector<LoopRV> loops =
        sch.GetLoops(sch.GetBlock(block).value()).value();
    absl::Status s = sch.Parallel(loops[0]);
    EXPECT_TRUE(s.ok()) << block << ": " << s;
  }
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same;
  absl::Status trace = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trace.ok()) << trace;
}

TEST(Parallel, RejectsAConsumerReadingAnotherIterationsWrite) {
  Program initial = testing::NeighborReadProgram(7);
  ASSERT_TRUE(testing::CheckSameResult(initial, initial).ok());
  TracedSchedule sch(initial);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  absl::Status s = sch.Parallel(loops[0]);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "parallel: loop \"i\" is not data-parallel: block \"C\" reads "
            "B[max(i - 1, 0)] "
            "and block \"B\" writes B[i], which may be the same element in two "
            "iterations");
  EXPECT_EQ(sch.program().FindLoop("i")->for_kind, ForKind::kSerial);
}

TEST(Parallel, TiledStagesWithAndWithoutOverlap) {
  Program exact = testing::TiledStagesProgram(5, 3, 0);
  TracedSchedule sch(exact);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  absl::Status s = sch.Parallel(loops[0]);
  ASSERT_TRUE(s.ok()) << s;
  absl::Status same = testing::CheckSameResult(exact, sch.program());
  EXPECT_TRUE(same.ok()) << same;
  absl::Status trace = testing::CheckTraceRoundTrip(sch, exact);
  EXPECT_TRUE(trace.ok()) << trace;

  Program overlap = testing::TiledStagesProgram(5, 3, 2);
  ASSERT_TRUE(testing::CheckSameResult(overlap, overlap).ok());
  absl::Status refused = primitive::Parallel(&overlap, "i_0");
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("block \"B\" writes B[i_0 * 3 + ax]"),
            std::string::npos)
      << refused;
  // The inner loops are fine.
  EXPECT_TRUE(primitive::Parallel(&overlap, "ax").ok());
}

TEST(Parallel, ScratchBufferMustBePrivate) {
  Program shared = testing::ScratchProgram(6, /*private_scratch=*/false);
  absl::Status s = primitive::Parallel(&shared, "i");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("block \"C\" writes T[0]"), std::string::npos)
      << s;
  Program initial = testing::ScratchProgram(6, /*private_scratch=*/true);
  Program own = initial;
  ASSERT_TRUE(primitive::Parallel(&own, "i").ok());
  absl::Status same = testing::CheckSameResult(initial, own);
  EXPECT_TRUE(same.ok()) << same;
}

TEST(Parallel, RejectsNestedParallelAndOtherKinds) {
  TracedSchedule sch(testing::MatmulProgram(4, 6, 3));
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  ASSERT_TRUE(sch.Parallel(loops[0]).ok());
  std::string before = PrintProgram(sch.program());
  absl::Status nested = sch.Parallel(loops[1]);
  EXPECT_EQ(nested.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      nested.message(),
      "parallel: loop \"j\" is nested with parallel loop \"i\" (one level of "
      "parallelism)");
  EXPECT_EQ(PrintProgram(sch.program()), before);

  TracedSchedule other(testing::MatmulProgram(4, 6, 3));
  loops = other.GetLoops(other.GetBlock("C").value()).value();
  ASSERT_TRUE(other.Unroll(loops[0]).ok());
  absl::Status unrolled = other.Parallel(loops[0]);
  EXPECT_EQ(unrolled.message(), "parallel: loop \"i\" is already unrolled");
  ASSERT_TRUE(other.Bind(loops[1], "threadIdx.x").ok());
  absl::Status bound = other.Parallel(loops[1]);
  EXPECT_EQ(bound.message(),
            "parallel: loop \"j\" is already bound to threadIdx.x");
  Program p = testing::MatmulProgram(2, 2, 2);
  absl::Status unknown = primitive::Parallel(&p, "zz");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.message(), "parallel: no loop named \"zz\"");
}

}  // namespace
}  // namespace lathe
