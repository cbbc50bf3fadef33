#include "compiler/schedule/primitive/fuse.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/schedule/traced_schedule.h"
#include "tests/compiler/schedule/same_result.h"
#include "tests/compiler/schedule/test_programs.h"
#include "tests/compiler/schedule/trace_round_trip.h"

namespace lathe {
namespace {

TEST(Fuse, TwoLoopsBecomeOneWithDivModBindings) {
  Program initial = testing::MatmulProgram(6, 5, 4);
  TracedSchedule sch(initial);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  auto fused = sch.Fuse({loops[0], loops[1]});
  ASSERT_TRUE(fused.ok()) << fused.status();
  const Program& p = sch.program();
  EXPECT_EQ(sch.LoopName(*fused).value(), "i_j_fused");
  const ForNode* loop = p.FindLoop("i_j_fused");
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->extent, 30);
  EXPECT_EQ(loop->for_kind, ForKind::kSerial);
  EXPECT_EQ(p.FindLoop("i"), nullptr);
  EXPECT_EQ(p.FindLoop("j"), nullptr);
  const BlockNode* c = p.FindBlock("C");
  EXPECT_EQ(c->iter_values[0].ToString(), "i_j_fused // 5");
  EXPECT_EQ(c->iter_values[1].ToString(), "i_j_fused % 5");
  EXPECT_EQ(c->iter_values[2].ToString(), "k");
  EXPECT_EQ(c->predicate.ToString(), "true");
  EXPECT_TRUE(testing::CheckSameResult(initial, p).ok());
  EXPECT_TRUE(testing::CheckTraceRoundTrip(sch, initial).ok());
}

TEST(Fuse, ThreeLoops) {
  Program initial = testing::MatmulProgram(3, 5, 7);
  TracedSchedule sch(initial);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  auto fused = sch.Fuse({loops[0], loops[1], loops[2]});
  ASSERT_TRUE(fused.ok()) << fused.status();
  const Program& p = sch.program();
  EXPECT_EQ(p.FindLoop("i_j_k_fused")->extent, 105);
  const BlockNode* c = p.FindBlock("C");
  EXPECT_EQ(c->iter_values[0].ToString(), "i_j_k_fused // 35");
  EXPECT_EQ(c->iter_values[1].ToString(), "i_j_k_fused // 7 % 5");
  EXPECT_EQ(c->iter_values[2].ToString(), "i_j_k_fused % 7");
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same;
  absl::Status trace = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trace.ok()) << trace;
}

TEST(Fuse, FuseThenSplitRoundTripOnPrimeExtents) {
  // 7 x 11 = 77 iterations, split by 4 (a tail of 3) and by 13.
  Program initial = testing::MatmulProgram(7, 11, 3);
  for (int64_t factor : {4, 13, 77}) {
    TracedSchedule sch(initial);
    std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
    auto fused = sch.Fuse({loops[0], loops[1]});
    ASSERT_TRUE(fused.ok()) << fused.status();
    auto split = sch.Split(*fused, {Factor(), Factor(factor)});
    ASSERT_TRUE(split.ok()) << split.status();
    absl::Status same = testing::CheckSameResult(initial, sch.program());
    EXPECT_TRUE(same.ok()) << "factor " << factor << ": " << same << "\n"
                           << PrintProgram(sch.program());
    // And fusing the split loops back gives the fused loop again.
    auto refused = sch.Fuse(*split);
    ASSERT_TRUE(refused.ok()) << refused.status();
    same = testing::CheckSameResult(initial, sch.program());
    EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
    absl::Status trace = testing::CheckTraceRoundTrip(sch, initial);
    EXPECT_TRUE(trace.ok()) << trace;
  }
}

TEST(Fuse, SplitThenFuseInnerTiles) {
  Program initial = testing::MatmulProgram(12, 10, 3);
  TracedSchedule sch(initial);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  std::vector<LoopRV> is =
      sch.Split(loops[0], {Factor(), Factor(int64_t{4})}).value();
  std::vector<LoopRV> js =
      sch.Split(loops[1], {Factor(), Factor(int64_t{5})}).value();
  ASSERT_TRUE(sch.Reorder({is[0], js[0], is[1], js[1]}).ok());
  auto outer = sch.Fuse({is[0], js[0]});
  ASSERT_TRUE(outer.ok()) << outer.status();
  auto inner = sch.Fuse({is[1], js[1], loops[2]});
  ASSERT_TRUE(inner.ok()) << inner.status();
  const BlockNode* c = sch.program().FindBlock("C");
  EXPECT_EQ(c->iter_values[0].ToString(),
            "i_0_j_0_fused // 2 * 4 + i_1_j_1_k_fused // 15");
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
  absl::Status trace = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trace.ok()) << trace;
}

TEST(Fuse, KeepsTheOuterLoopsAnnotations) {
  Program p = testing::MatmulProgram(4, 4, 4);
  p.FindLoop("i")->annotations["pragma_auto_unroll_max_step"] = int64_t{16};
  ASSERT_TRUE(primitive::Fuse(&p, {"i", "j"}).ok());
  const ForNode* fused = p.FindLoop("i_j_fused");
  ASSERT_EQ(fused->annotations.size(), 1u);
  EXPECT_EQ(
      std::get<int64_t>(fused->annotations.at("pragma_auto_unroll_max_step")),
      16);
}

TEST(Fuse, FreshNameAvoidsExistingNames) {
  Program p = testing::MatmulProgram(4, 4, 4);
  p.FindBlock("C")->name =
      "i_j_fused";  // take the name the fused loop would get
  auto name = primitive::Fuse(&p, {"i", "j"});
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(*name, "i_j_fused_1");
  auto again = primitive::Fuse(&p, {"i_j_fused_1", "k"});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, "i_j_fused_1_k_fused");
}

TEST(Fuse, RejectsBadLoopsAndLeavesProgramUnchanged) {
  TracedSchedule sch(testing::DenseBiasReluProgram(4, 5, 6));
  std::vector<LoopRV> dense =
      sch.GetLoops(sch.GetBlock("T_dense").value()).value();
  std::vector<LoopRV> bias =
      sch.GetLoops(sch.GetBlock("T_bias").value()).value();
  std::string before = PrintProgram(sch.program());
  size_t instructions = sch.trace().instructions.size();

  auto one = sch.Fuse({dense[0]});
  EXPECT_EQ(one.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(one.status().message(),
            "fuse: needs at least 2 loops, got 1 (\"i\")");

  auto repeated = sch.Fuse({dense[0], dense[0]});
  EXPECT_EQ(repeated.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(repeated.status().message(),
            "fuse: loop \"i\" is given twice in \"i\", \"i\"");

  auto skip = sch.Fuse({dense[0], dense[2]});
  EXPECT_EQ(skip.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(skip.status().message(),
            "fuse: loop \"k\" is not the body of loop \"i\" (its body is loop "
            "\"j\"); "
            "fused loops must be directly nested, outermost first");

  auto inverted = sch.Fuse({dense[1], dense[0]});
  EXPECT_EQ(inverted.status().code(), absl::StatusCode::kFailedPrecondition);

  auto other_nest = sch.Fuse({dense[0], bias[1]});
  EXPECT_EQ(other_nest.status().code(), absl::StatusCode::kFailedPrecondition);

  auto below_block = sch.Fuse({dense[2], bias[0]});
  ASSERT_FALSE(below_block.ok());
  EXPECT_NE(
      below_block.status().message().find("its body is block \"T_dense\""),
      std::string::npos)
      << below_block.status();

  ASSERT_TRUE(sch.Bind(bias[1], "threadIdx.x").ok());
  before = PrintProgram(sch.program());
  instructions = sch.trace().instructions.size();
  auto bound = sch.Fuse({bias[0], bias[1]});
  EXPECT_EQ(bound.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(bound.status().message(),
            "fuse: loop \"j_1\" is bound to thread axis threadIdx.x");

  EXPECT_EQ(PrintProgram(sch.program()), before);
  EXPECT_EQ(sch.trace().instructions.size(), instructions);
}

TEST(Fuse, RejectsASequenceBetweenLoops) {
  Program p = testing::TiledStagesProgram(3, 4, 0);
  std::string before = PrintProgram(p);
  auto seq = primitive::Fuse(&p, {"i_0", "i_1"});
  ASSERT_FALSE(seq.ok());
  EXPECT_NE(seq.status().message().find("its body is a sequence of statements"),
            std::string::npos)
      << seq.status();
  auto unknown = primitive::Fuse(&p, {"i_0", "nope"});
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(), "fuse: no loop named \"nope\"");
}

}  // namespace
}  // namespace lathe
