#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/schedule/primitive/loop_kind.h"
#include "compiler/schedule/primitive/reorder.h"
#include "compiler/schedule/traced_schedule.h"
#include "tests/compiler/schedule/same_result.h"
#include "tests/compiler/schedule/test_programs.h"
#include "tests/compiler/schedule/trace_round_trip.h"

namespace lathe {
namespace {

TEST(Unroll, AnySerialLoopIncludingAReduction) {
  Program initial = testing::MatmulProgram(3, 5, 7);
  TracedSchedule sch(initial);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  ASSERT_TRUE(sch.Unroll(loops[2]).ok());
  ASSERT_TRUE(sch.Unroll(loops[1]).ok());
  ASSERT_TRUE(sch.Unroll(loops[2]).ok());  // idempotent
  EXPECT_EQ(sch.program().FindLoop("k")->for_kind, ForKind::kUnrolled);
  EXPECT_EQ(sch.program().FindLoop("j")->for_kind, ForKind::kUnrolled);
  EXPECT_EQ(sch.program().FindLoop("i")->for_kind, ForKind::kSerial);
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same;
  absl::Status trace = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trace.ok()) << trace;
}

TEST(Unroll, KeepsSerialOrderSoDependencesAreFine) {
  // The wavefront cannot run in parallel, but unrolling keeps its order.
  Program initial = testing::WavefrontProgram(4, 5);
  Program p = initial;
  ASSERT_TRUE(primitive::Unroll(&p, "i").ok());
  ASSERT_TRUE(primitive::Unroll(&p, "j").ok());
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same;
}

TEST(Unroll, RejectsLoopsThatAlreadyRunConcurrently) {
  TracedSchedule sch(testing::MatmulProgram(4, 4, 4));
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  ASSERT_TRUE(sch.Parallel(loops[0]).ok());
  std::string before = PrintProgram(sch.program());
  absl::Status s = sch.Unroll(loops[0]);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "unroll: loop \"i\" is already parallel");
  EXPECT_EQ(PrintProgram(sch.program()), before);

  Program p = testing::MatmulProgram(4, 4, 4);
  ASSERT_TRUE(primitive::Bind(&p, "i", "blockIdx.x").ok());
  EXPECT_EQ(primitive::Unroll(&p, "i").message(),
            "unroll: loop \"i\" is already bound to blockIdx.x");
  ASSERT_TRUE(primitive::Reorder(&p, {"i", "k", "j"}).ok());
  ASSERT_TRUE(primitive::Vectorize(&p, "j").ok());
  EXPECT_EQ(primitive::Unroll(&p, "j").message(),
            "unroll: loop \"j\" is already vectorized");
  EXPECT_EQ(primitive::Unroll(&p, "nope").code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lathe
