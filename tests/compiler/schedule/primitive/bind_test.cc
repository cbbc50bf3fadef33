#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/schedule/primitive/loop_kind.h"
#include "compiler/schedule/traced_schedule.h"
#include "tests/compiler/schedule/same_result.h"
#include "tests/compiler/schedule/test_programs.h"
#include "tests/compiler/schedule/trace_round_trip.h"

namespace lathe {
namespace {

TEST(Bind, BlockAndThreadAxesOnAFusedSplitNest) {
  Program initial = testing::MatmulProgram(6, 10, 3);
  TracedSchedule sch(initial);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  LoopRV fused = sch.Fuse({loops[0], loops[1]}).value();
  std::vector<LoopRV> split =
      sch.Split(fused, {Factor(), Factor(int64_t{8})}).value();
  ASSERT_TRUE(sch.Bind(split[0], "blockIdx.x").ok());
  absl::Status s = sch.Bind(split[1], "threadIdx.x");
  ASSERT_TRUE(s.ok()) << s << "\n" << PrintProgram(sch.program());
  const ForNode* bx = sch.program().FindLoop(sch.LoopName(split[0]).value());
  EXPECT_EQ(bx->for_kind, ForKind::kThreadBinding);
  EXPECT_EQ(bx->thread_tag, "blockIdx.x");
  ASSERT_TRUE(
      sch.Bind(split[1], "threadIdx.x").ok());  // same axis again: no-op
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same;
  absl::Status trace = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trace.ok()) << trace;
}

TEST(Bind, EveryAxisName) {
  for (const char* axis :
       {"blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y",
        "threadIdx.z", "vthread"}) {
    Program p = testing::MatmulProgram(2, 2, 2);
    absl::Status s = primitive::Bind(&p, "i", axis);
    EXPECT_TRUE(s.ok()) << axis << ": " << s;
    EXPECT_EQ(p.FindLoop("i")->thread_tag, axis);
  }
}

TEST(Bind, RejectsAReductionLoop) {
  TracedSchedule sch(testing::MatmulProgram(4, 4, 8));
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  std::string before = PrintProgram(sch.program());
  absl::Status s = sch.Bind(loops[2], "threadIdx.x");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "bind: loop \"k\" is not data-parallel: block \"C\" binds it to "
            "reduce iteration "
            "variable \"vk\"");
  EXPECT_EQ(PrintProgram(sch.program()), before);
  EXPECT_EQ(sch.trace().instructions.size(), 2u);
}

TEST(Bind, RejectsAnUnknownAxis) {
  Program p = testing::MatmulProgram(4, 4, 4);
  absl::Status s = primitive::Bind(&p, "i", "threadIdx.w");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      s.message(),
      "bind: unknown thread axis \"threadIdx.w\"; expected blockIdx.x|y|z, "
      "threadIdx.x|y|z or vthread");
  EXPECT_EQ(primitive::Bind(&p, "nope", "threadIdx.x").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Bind, RejectsTheSameAxisTwiceInANest) {
  Program p = testing::MatmulProgram(4, 4, 4);
  ASSERT_TRUE(primitive::Bind(&p, "i", "threadIdx.x").ok());
  std::string before = PrintProgram(p);
  absl::Status s = primitive::Bind(&p, "j", "threadIdx.x");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "bind: loop \"j\" cannot be bound to threadIdx.x: loop \"i\" in "
            "its nest is "
            "bound to it");
  absl::Status rebind = primitive::Bind(&p, "i", "threadIdx.y");
  EXPECT_EQ(rebind.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(rebind.message(),
            "bind: loop \"i\" is already bound to threadIdx.x");
  EXPECT_EQ(PrintProgram(p), before);
  // Another nest may use the same axis.
  Program q = testing::DenseBiasReluProgram(4, 4, 4);
  ASSERT_TRUE(primitive::Bind(&q, "i", "threadIdx.x").ok());
  EXPECT_TRUE(primitive::Bind(&q, "i_1", "threadIdx.x").ok());
}

TEST(Bind, RejectsCrossIterationDependencesAndMixingWithParallel) {
  Program p = testing::NeighborReadProgram(6);
  absl::Status s = primitive::Bind(&p, "i", "blockIdx.x");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("bind: loop \"i\" is not data-parallel"),
            std::string::npos)
      << s;
  Program q = testing::MatmulProgram(4, 4, 4);
  ASSERT_TRUE(primitive::Parallel(&q, "i").ok());
  EXPECT_EQ(primitive::Bind(&q, "j", "threadIdx.x").message(),
            "bind: loop \"j\" is nested with parallel loop \"i\"");
  EXPECT_EQ(primitive::Bind(&q, "i", "threadIdx.x").message(),
            "bind: loop \"i\" is already parallel");
}

}  // namespace
}  // namespace lathe
