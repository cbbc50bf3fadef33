// Tests of ForkSchedule (tuner/space/schedule_rule.h).
#include "tuner/space/schedule_rule.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "tests/tuner/space/space_test_util.h"

namespace lathe::tuner {
namespace {

using testing::RuleFixture;

TEST(ForkSchedule, CopiesTheProgramAndKeepsHandles) {
  RuleFixture f("matmul:M=16,N=12,K=8");
  std::unique_ptr<TracedSchedule> sch = f.Fresh();
  BlockRV c = sch->GetBlock("C").value();
  std::vector<LoopRV> loops = sch->GetLoops(c).value();
  std::vector<ExprRV> tile = sch->SamplePerfectTile(loops[0], 2, 4).value();
  std::vector<LoopRV> parts = sch->Split(loops[0], {tile[0], tile[1]}).value();

  absl::StatusOr<std::unique_ptr<TracedSchedule>> fork =
      ForkSchedule(*sch, f.initial);
  ASSERT_TRUE(fork.ok()) << fork.status();
  EXPECT_TRUE(StructuralEqual((*fork)->program(), sch->program()))
      << PrintProgram((*fork)->program());
  EXPECT_EQ((*fork)->trace().ToText(), sch->trace().ToText());
  EXPECT_EQ((*fork)->trace().decisions, sch->trace().decisions);
  // Handles taken from the original name the same things in the fork.
  EXPECT_EQ((*fork)->Value(tile[1]).value(), sch->Value(tile[1]).value());
  EXPECT_EQ((*fork)->LoopName(parts[1]).value(),
            sch->LoopName(parts[1]).value());
  EXPECT_EQ((*fork)->BlockName(c).value(), "C");
}

TEST(ForkSchedule, TheCopyIsIndependent) {
  RuleFixture f("matmul:M=16,N=12,K=8");
  std::unique_ptr<TracedSchedule> sch = f.Fresh();
  BlockRV c = sch->GetBlock("C").value();
  std::vector<LoopRV> loops = sch->GetLoops(c).value();
  std::unique_ptr<TracedSchedule> fork = ForkSchedule(*sch, f.initial).value();

  ASSERT_TRUE(fork->Split(loops[1], {Factor{}, Factor{int64_t{4}}}).ok());
  ASSERT_TRUE(fork->Parallel(loops[0]).ok());
  EXPECT_EQ(sch->trace().instructions.size(), 2u);  // get_block, get_loops
  EXPECT_EQ(fork->trace().instructions.size(), 4u);
  EXPECT_FALSE(StructuralEqual(fork->program(), sch->program()));
  EXPECT_EQ(sch->program().FindLoop(sch->LoopName(loops[0]).value())->for_kind,
            ForKind::kSerial);
}

TEST(ForkSchedule, ForksOfTheSameScheduleSampleAlike) {
  RuleFixture f("matmul:M=64,N=64,K=64");
  std::unique_ptr<TracedSchedule> sch = f.Fresh();
  std::vector<LoopRV> loops = sch->GetLoops(sch->GetBlock("C").value()).value();
  std::unique_ptr<TracedSchedule> a = ForkSchedule(*sch, f.initial).value();
  std::unique_ptr<TracedSchedule> b = ForkSchedule(*sch, f.initial).value();
  std::vector<ExprRV> ta = a->SamplePerfectTile(loops[2], 3, 64).value();
  std::vector<ExprRV> tb = b->SamplePerfectTile(loops[2], 3, 64).value();
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(a->Value(ta[i]).value(), b->Value(tb[i]).value());
}

}  // namespace
}  // namespace lathe::tuner
