#include "compiler/schedule/primitive/reorder.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/schedule/primitive/loop_kind.h"
#include "compiler/schedule/traced_schedule.h"
#include "tests/compiler/schedule/same_result.h"
#include "tests/compiler/schedule/test_programs.h"
#include "tests/compiler/schedule/trace_round_trip.h"

namespace lathe {
namespace {

std::vector<std::string> LoopNames(const Program& p, const std::string& block) {
  std::vector<std::string> names;
  for (const ForNode* l : p.LoopsAbove(p.FindBlock(block)))
    names.push_back(l->var->name);
  return names;
}

TEST(Reorder, MatmulKIJIsCorrect) {
  Program initial = testing::MatmulProgram(5, 7, 3);
  TracedSchedule sch(initial);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  absl::Status s = sch.Reorder({loops[2], loops[0], loops[1]});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(LoopNames(sch.program(), "C"),
            (std::vector<std::string>{"k", "i", "j"}));
  // Bindings are untouched: loops move, blocks stay.
  const BlockNode* c = sch.program().FindBlock("C");
  EXPECT_EQ(c->iter_values[0].ToString(), "i");
  EXPECT_EQ(c->iter_values[2].ToString(), "k");
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same;
  absl::Status trace = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trace.ok()) << trace;
}

TEST(Reorder, PermutesOnlyTheGivenPositions) {
  Program initial = testing::MatmulProgram(6, 4, 5);
  TracedSchedule sch(initial);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  std::vector<LoopRV> is =
      sch.Split(loops[0], {Factor(), Factor(int64_t{2})}).value();
  std::vector<LoopRV> js =
      sch.Split(loops[1], {Factor(int64_t{2}), Factor()}).value();
  // Nest i_0 i_1 j_0 j_1 k; reorder j_1 and i_1: j_0 stays where it is.
  ASSERT_TRUE(sch.Reorder({js[1], is[1]}).ok());
  EXPECT_EQ(LoopNames(sch.program(), "C"),
            (std::vector<std::string>{"i_0", "j_1", "j_0", "i_1", "k"}));
  // Tiling order i_0 j_0 k i_1 j_1.
  ASSERT_TRUE(sch.Reorder({is[0], js[0], loops[2], is[1], js[1]}).ok());
  EXPECT_EQ(LoopNames(sch.program(), "C"),
            (std::vector<std::string>{"i_0", "j_0", "k", "i_1", "j_1"}));
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same;
  absl::Status trace = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trace.ok()) << trace;
}

TEST(Reorder, LoopsKeepKindAndAnnotations) {
  Program initial = testing::MatmulProgram(4, 6, 3);
  TracedSchedule sch(initial);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  ASSERT_TRUE(sch.Parallel(loops[1]).ok());
  ASSERT_TRUE(sch.AnnotateLoop(loops[0], "note", std::string("outer")).ok());
  ASSERT_TRUE(sch.Reorder({loops[1], loops[0]}).ok());
  const Program& p = sch.program();
  EXPECT_EQ(LoopNames(p, "C"), (std::vector<std::string>{"j", "i", "k"}));
  EXPECT_EQ(p.FindLoop("j")->for_kind, ForKind::kParallel);
  EXPECT_EQ(p.FindLoop("i")->for_kind, ForKind::kSerial);
  EXPECT_EQ(std::get<std::string>(p.FindLoop("i")->annotations.at("note")),
            "outer");
  EXPECT_TRUE(p.FindLoop("j")->annotations.empty());
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same;
  absl::Status trace = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trace.ok()) << trace;
}

TEST(Reorder, SingleLoopAndIdentityAreNoOps) {
  Program p = testing::MatmulProgram(4, 4, 4);
  std::string before = PrintProgram(p);
  ASSERT_TRUE(primitive::Reorder(&p, {"j"}).ok());
  ASSERT_TRUE(primitive::Reorder(&p, {"i", "k"}).ok());
  EXPECT_EQ(PrintProgram(p), before);
}

TEST(Reorder, RejectsLoopsOfTwoNests) {
  TracedSchedule sch(testing::DenseBiasReluProgram(4, 5, 6));
  std::vector<LoopRV> dense =
      sch.GetLoops(sch.GetBlock("T_dense").value()).value();
  std::vector<LoopRV> bias =
      sch.GetLoops(sch.GetBlock("T_bias").value()).value();
  std::vector<LoopRV> k =
      sch.Split(dense[2], {Factor(int64_t{2}), Factor()}).value();
  std::string before = PrintProgram(sch.program());
  size_t instructions = sch.trace().instructions.size();
  absl::Status s = sch.Reorder({bias[0], k[1]});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "reorder: loops \"i_1\" and \"k_1\" are not in one nest");
  absl::Status s2 = sch.Reorder({dense[0], bias[1]});
  EXPECT_EQ(s2.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(PrintProgram(sch.program()), before);
  EXPECT_EQ(sch.trace().instructions.size(), instructions);
}

TEST(Reorder, RejectsRepeatedUnknownAndEmpty) {
  Program p = testing::MatmulProgram(4, 4, 4);
  std::string before = PrintProgram(p);
  absl::Status dup = primitive::Reorder(&p, {"i", "j", "i"});
  EXPECT_EQ(dup.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(dup.message(), "reorder: loop \"i\" is given twice");
  absl::Status unknown = primitive::Reorder(&p, {"i", "x"});
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.message(), "reorder: no loop named \"x\"");
  EXPECT_EQ(primitive::Reorder(&p, {}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PrintProgram(p), before);
}

TEST(Reorder, RejectsImperfectNests) {
  // A sequence of two stages between i_0 and i_1.
  Program tiles = testing::TiledStagesProgram(3, 4, 0);
  std::string before = PrintProgram(tiles);
  TracedSchedule sch(tiles);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  absl::Status s = sch.Reorder({loops[1], loops[0]});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "reorder: loops \"i_0\" .. \"i_1\" are not a perfect nest: the "
            "body of loop "
            "\"i_0\" is a sequence of statements");
  EXPECT_EQ(PrintProgram(sch.program()), before);
  // A block between two loops: a loop inside a block body.
  Program p = testing::MatmulProgram(3, 3, 3);
  BlockNode* c = p.FindBlock("C");
  Expr extra = Var("x");
  c->body = MakeFor(extra, 2, std::move(c->body));
  before = PrintProgram(p);
  absl::Status b = primitive::Reorder(&p, {"x", "k"});
  EXPECT_EQ(b.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(b.message().find("the body of loop \"k\" is block \"C\""),
            std::string::npos)
      << b;
  EXPECT_EQ(PrintProgram(p), before);
}

TEST(Reorder, RejectsSwappingReductionLoops) {
  // Swapping k_0 and k_1 changes the order in which C[i, j] is summed.
  Program initial = testing::MatmulProgram(4, 4, 8);
  TracedSchedule sch(initial);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  std::vector<LoopRV> k =
      sch.Split(loops[2], {Factor(int64_t{2}), Factor()}).value();
  std::string before = PrintProgram(sch.program());
  absl::Status s = sch.Reorder({k[1], k[0]});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("reorder: loops \"k_0\" and \"k_1\" cannot swap"),
            std::string::npos)
      << s;
  EXPECT_EQ(PrintProgram(sch.program()), before);
  // Moving both outward together keeps their order: fine.
  ASSERT_TRUE(sch.Reorder({k[0], k[1], loops[0], loops[1]}).ok());
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same;
}

TEST(Reorder, RejectsReversingAWavefront) {
  Program initial = testing::WavefrontProgram(5, 6);
  ASSERT_TRUE(testing::CheckSameResult(initial, initial).ok());
  Program p = initial;
  absl::Status s = primitive::Reorder(&p, {"j", "i"});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(
      s.message().find("block \"S\" reads S[max(i - 1, 0), min(j + 1, 5)]"),
      std::string::npos)
      << s;
  // Had it been applied, the result would differ: check the guard is real.
  Program swapped = initial;
  ForNode* i = swapped.FindLoop("i");
  ForNode* j = swapped.FindLoop("j");
  std::swap(i->var, j->var);
  std::swap(i->extent, j->extent);
  EXPECT_FALSE(testing::CheckSameResult(initial, swapped).ok());
}

TEST(Reorder, RejectsMovingAVectorizedLoopOutward) {
  Program p = testing::MatmulProgram(4, 4, 4);
  ASSERT_TRUE(primitive::Reorder(&p, {"i", "k", "j"}).ok());
  ASSERT_TRUE(primitive::Vectorize(&p, "j").ok());
  std::string before = PrintProgram(p);
  absl::Status s = primitive::Reorder(&p, {"j", "k"});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      s.message(),
      "reorder: loop \"j\" is vectorized and would no longer be innermost");
  EXPECT_EQ(PrintProgram(p), before);
}

}  // namespace
}  // namespace lathe
