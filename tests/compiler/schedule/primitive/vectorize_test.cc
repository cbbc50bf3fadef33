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

TEST(Vectorize, AcceptsTheInnermostSpatialLoop) {
  Program initial = testing::MatmulProgram(5, 13, 3);
  TracedSchedule sch(initial);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  ASSERT_TRUE(sch.Reorder({loops[0], loops[2], loops[1]}).ok());
  absl::Status s = sch.Vectorize(loops[1]);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(sch.program().FindLoop("j")->for_kind, ForKind::kVectorized);
  ASSERT_TRUE(sch.Vectorize(loops[1]).ok());  // idempotent
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same;
  absl::Status trace = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trace.ok()) << trace;
}

TEST(Vectorize, AcceptsASplitInnerLoopWithATail) {
  Program initial = testing::DenseBiasReluProgram(3, 11, 4);
  TracedSchedule sch(initial);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("Y").value()).value();
  std::vector<LoopRV> js =
      sch.Split(loops[1], {Factor(), Factor(int64_t{4})}).value();
  absl::Status s = sch.Vectorize(js[1]);
  ASSERT_TRUE(s.ok()) << s;
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same;
  absl::Status trace = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trace.ok()) << trace;
}

TEST(Vectorize, RejectsALoopWithALoopBelow) {
  TracedSchedule sch(testing::MatmulProgram(4, 8, 3));
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  std::string before = PrintProgram(sch.program());
  absl::Status s = sch.Vectorize(loops[1]);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "vectorize: loop \"j\" is not innermost: loop \"k\" is below it");
  EXPECT_EQ(PrintProgram(sch.program()), before);
  EXPECT_EQ(sch.trace().instructions.size(), 2u);
}

TEST(Vectorize, RejectsAReductionLoop) {
  Program p = testing::MatmulProgram(4, 8, 3);
  std::string before = PrintProgram(p);
  absl::Status s = primitive::Vectorize(&p, "k");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "vectorize: loop \"k\" is not data-parallel: block \"C\" binds it "
            "to reduce "
            "iteration variable \"vk\"");
  EXPECT_EQ(PrintProgram(p), before);
}

TEST(Vectorize, RejectsCrossIterationDependences) {
  Program p = testing::NeighborReadProgram(8);
  absl::Status s = primitive::Vectorize(&p, "i");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("vectorize: loop \"i\" is not data-parallel"),
            std::string::npos)
      << s;
}

TEST(Vectorize, RejectsOtherKindsAndUnknownLoops) {
  Program p = testing::MatmulProgram(4, 4, 4);
  ASSERT_TRUE(primitive::Reorder(&p, {"i", "k", "j"}).ok());
  ASSERT_TRUE(primitive::Unroll(&p, "j").ok());
  absl::Status s = primitive::Vectorize(&p, "j");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "vectorize: loop \"j\" is already unrolled");
  absl::Status unknown = primitive::Vectorize(&p, "q");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lathe
