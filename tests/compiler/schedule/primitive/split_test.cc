#include "compiler/schedule/primitive/split.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/schedule/replay.h"
#include "compiler/schedule/traced_schedule.h"
#include "tests/compiler/schedule/test_programs.h"

namespace lathe {
namespace {

TEST(Split, DivisibleFactorsNeedNoPredicate) {
  TracedSchedule sch(testing::MatmulProgram(16, 8, 4));
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  std::vector<LoopRV> split =
      sch.Split(loops[0], {Factor(int64_t{4}), Factor()}).value();
  ASSERT_EQ(split.size(), 2u);
  const Program& p = sch.program();
  EXPECT_EQ(p.FindLoop("i_0")->extent, 4);
  EXPECT_EQ(p.FindLoop("i_1")->extent, 4);
  const BlockNode* block = p.FindBlock("C");
  EXPECT_EQ(block->iter_values[0].ToString(), "i_0 * 4 + i_1");
  EXPECT_EQ(block->predicate.ToString(), "true");
  EXPECT_EQ(p.FindLoop("i"), nullptr);
}

TEST(Split, NonDivisibleFactorAddsPredicate) {
  TracedSchedule sch(testing::MatmulProgram(7, 8, 4));
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  ASSERT_TRUE(sch.Split(loops[0], {Factor(), Factor(int64_t{3})}).ok());
  const Program& p = sch.program();
  EXPECT_EQ(p.FindLoop("i_0")->extent, 3);  // ceil(7 / 3)
  EXPECT_EQ(p.FindBlock("C")->predicate.ToString(), "i_0 * 3 + i_1 < 7");
}

TEST(Split, ThreeWay) {
  TracedSchedule sch(testing::MatmulProgram(24, 8, 4));
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  auto split =
      sch.Split(loops[0], {Factor(int64_t{2}), Factor(), Factor(int64_t{4})});
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(sch.program().FindLoop("i_1")->extent, 3);
  EXPECT_EQ(sch.program().FindBlock("C")->iter_values[0].ToString(),
            "i_0 * 12 + i_1 * 4 + i_2");
}

TEST(Split, RejectsBadFactorsAndLeavesProgramUnchanged) {
  TracedSchedule sch(testing::MatmulProgram(16, 8, 4));
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  std::string before = PrintProgram(sch.program());
  auto zero = sch.Split(loops[0], {Factor(int64_t{0}), Factor()});
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("split: loop \"i\""),
            std::string::npos)
      << zero.status();
  auto two_inferred = sch.Split(loops[0], {Factor(), Factor()});
  EXPECT_FALSE(two_inferred.ok());
  auto too_small =
      sch.Split(loops[0], {Factor(int64_t{3}), Factor(int64_t{5})});
  ASSERT_FALSE(too_small.ok());
  EXPECT_NE(too_small.status().message().find("cover only 15"),
            std::string::npos);
  auto one = sch.Split(loops[0], {Factor(int64_t{16})});
  EXPECT_FALSE(one.ok());
  EXPECT_EQ(PrintProgram(sch.program()), before);
  EXPECT_TRUE(sch.trace().instructions.size() == 2);  // get_block, get_loops
}

// Padding is bounded (padding_limit.h): a vector's worth past the extent
// is fine, factors far past it (or whose product overflows int64) are
// refused, naming the loop, and never wrap into a small or negative count.
TEST(Split, RefusesFactorsThatPadFarPastTheExtent) {
  TracedSchedule sch(testing::MatmulProgram(28, 8, 4));
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  const std::string before = PrintProgram(sch.program());
  constexpr int64_t kHuge = int64_t{1} << 62;
  for (const std::vector<Factor>& factors :
       {std::vector<Factor>{Factor(int64_t{4294967296}),
                            Factor(int64_t{4294967296})},
        std::vector<Factor>{Factor(int64_t{2}), Factor(kHuge)},
        std::vector<Factor>{Factor(int64_t{5}),
                            Factor(kHuge + (int64_t{1} << 40))},
        std::vector<Factor>{Factor(), Factor(int64_t{1000})},
        std::vector<Factor>{Factor(int64_t{10}), Factor(int64_t{10})}}) {
    auto split = sch.Split(loops[0], factors);
    ASSERT_FALSE(split.ok());
    const std::string message(split.status().message());
    EXPECT_NE(message.find("split: loop \"i\" (extent 28)"), std::string::npos)
        << message;
    EXPECT_NE(message.find("make more than 92 iterations"), std::string::npos)
        << message;
    EXPECT_EQ(message.find("cover only"), std::string::npos) << message;
  }
  EXPECT_EQ(PrintProgram(sch.program()), before);
  // A vector of 16 over 28 (two of them, 32 iterations) and 64 past it.
  EXPECT_TRUE(sch.Split(loops[0], {Factor(), Factor(int64_t{16})}).ok());
  TracedSchedule other(testing::MatmulProgram(28, 8, 4));
  loops = other.GetLoops(other.GetBlock("C").value()).value();
  EXPECT_TRUE(
      other.Split(loops[0], {Factor(int64_t{1}), Factor(int64_t{92})}).ok());
}

TEST(Split, SampledFactorsRoundTripThroughTrace) {
  Program initial = testing::MatmulProgram(32, 16, 8);
  TracedSchedule sch(initial, /*seed=*/42);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  std::vector<ExprRV> tiles = sch.SamplePerfectTile(loops[0], 3, 8).value();
  ASSERT_TRUE(sch.Split(loops[0], {tiles[0], tiles[1], tiles[2]}).ok());
  ASSERT_TRUE(sch.Split(loops[1], {Factor(), Factor(int64_t{4})}).ok());

  auto parsed = Trace::FromJson(sch.trace().ToJson());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(*parsed == sch.trace());
  auto replayed = ReplayTrace(*parsed, initial);
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_TRUE(StructuralEqual((*replayed)->program(), sch.program()));
  EXPECT_EQ((*replayed)->trace().ToText(), sch.trace().ToText());
}

TEST(Split, ReplayWithAnotherDecisionGivesThatProgram) {
  Program initial = testing::MatmulProgram(32, 16, 8);
  TracedSchedule sch(initial, /*seed=*/1);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  std::vector<ExprRV> tiles = sch.SamplePerfectTile(loops[0], 2, 32).value();
  ASSERT_TRUE(sch.Split(loops[0], {tiles[0], tiles[1]}).ok());
  Decisions decisions = sch.trace().decisions;
  decisions[2] = {2, 16};
  auto replayed = ReplayTrace(sch.trace(), initial, decisions);
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_EQ((*replayed)->program().FindLoop("i_0")->extent, 2);
  EXPECT_EQ((*replayed)->program().FindLoop("i_1")->extent, 16);
  decisions[2] = {3, 16};  // product 48 != 32
  auto invalid = ReplayTrace(sch.trace(), initial, decisions);
  ASSERT_FALSE(invalid.ok());
  EXPECT_NE(invalid.status().message().find("sample_perfect_tile"),
            std::string::npos)
      << invalid.status();
}

}  // namespace
}  // namespace lathe
