#include "compiler/schedule/analysis/index_digits.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>

namespace lathe {
namespace {

TEST(IndexDigits, MatchesTheDigitsOfABase) {
  Expr f = Var("f"), g = Var("g");
  Expr base;
  Digit digit;
  ASSERT_TRUE(MatchDigit(f, &base, &digit));
  EXPECT_TRUE(base.same_as(f));
  EXPECT_EQ(digit, (Digit{1, 0}));
  ASSERT_TRUE(MatchDigit(FloorDiv(f, 8), &base, &digit));
  EXPECT_EQ(digit, (Digit{8, 0}));
  ASSERT_TRUE(MatchDigit(FloorMod(f, 8), &base, &digit));
  EXPECT_EQ(digit, (Digit{1, 8}));
  ASSERT_TRUE(MatchDigit(FloorMod(FloorDiv(f, 4), 3), &base, &digit));
  EXPECT_EQ(digit, (Digit{4, 3}));
  // (x % 12) // 4 is (x // 4) % 3.
  ASSERT_TRUE(MatchDigit(FloorDiv(FloorMod(f, 12), 4), &base, &digit));
  EXPECT_TRUE(base.same_as(f));
  EXPECT_EQ(digit, (Digit{4, 3}));
  // A digit of f % 32 below 32 is that digit of f: ((f % 32) // 4) % 4 is
  // (f // 4) % 4, (f % 32) // 8 is (f // 8) % 4; (f % 12) // 8 stays.
  ASSERT_TRUE(
      MatchDigit(FloorMod(FloorDiv(FloorMod(f, 32), 4), 4), &base, &digit));
  EXPECT_TRUE(base.same_as(f));
  EXPECT_EQ(digit, (Digit{4, 4}));
  ASSERT_TRUE(MatchDigit(FloorDiv(FloorMod(f, 32), 8), &base, &digit));
  EXPECT_TRUE(base.same_as(f));
  EXPECT_EQ(digit, (Digit{8, 4}));
  ASSERT_TRUE(
      MatchDigit(FloorMod(FloorDiv(FloorMod(f, 12), 8), 2), &base, &digit));
  EXPECT_EQ(base.ToString(), "f % 12");
  EXPECT_EQ(digit, (Digit{8, 2}));
  ASSERT_TRUE(MatchDigit(FloorDiv(f * 8 + g, 10), &base, &digit));
  EXPECT_EQ(base.ToString(), "f * 8 + g");
  EXPECT_FALSE(MatchDigit(f * g, &base, &digit));
  EXPECT_FALSE(MatchDigit(FloorDiv(f, g), &base, &digit));
}

TEST(IndexDigits, DecomposesAnIndexForOneVariable) {
  Expr i = Var("i"), j = Var("j");
  Decomposed d = Decompose(i * 4 + j + 1, i);
  ASSERT_EQ(d.form, DigitForm::kDigit);
  EXPECT_EQ(d.coef, 4);
  EXPECT_TRUE(d.base.same_as(i));
  EXPECT_EQ(d.rest.ToString(), "1 + j");
  EXPECT_EQ(Decompose(j + 1, i).form, DigitForm::kAbsent);
  EXPECT_EQ(Decompose(i * 2 + j - i * 2, i).form, DigitForm::kAbsent);
  EXPECT_EQ(Decompose(i + FloorDiv(i, 2), i).form, DigitForm::kUnknown);
  EXPECT_EQ(Decompose(i * j, i).form, DigitForm::kUnknown);
  const int64_t big = std::numeric_limits<int64_t>::max() / 2 + 1;
  EXPECT_EQ(Decompose((i + j * big) * 2, i).form, DigitForm::kUnknown);
}

// The simplifier splits a stepped sum x = o * 56 + f where the step
// divides: x // 2 % 3 becomes (o * 28 + f // 2) % 3, x % 2 becomes f % 2.
// Those are digits of x again; other sums and steps are not.
TEST(IndexDigits, ADigitOfASplitSumIsADigitOfTheSum) {
  Expr o = Var("o"), f = Var("f");
  VarRanges ranges = {{o.get(), Interval::Extent(6)},
                      {f.get(), Interval::Extent(56)}};
  const Expr x = o * 56 + f;
  EXPECT_EQ(DigitOfOtherBase(o * 28 + FloorDiv(f, 2), {1, 3}, x, ranges),
            (Digit{2, 3}));
  EXPECT_EQ(DigitOfOtherBase(o * 28 + FloorDiv(f, 2), {4, 0}, x, ranges),
            (Digit{8, 0}));
  // x - f is a multiple of 2 (and of 8), not of 16.
  EXPECT_EQ(DigitOfOtherBase(f, {1, 2}, x, ranges), (Digit{1, 2}));
  EXPECT_EQ(DigitOfOtherBase(f, {2, 4}, x, ranges), (Digit{2, 4}));
  EXPECT_EQ(DigitOfOtherBase(f, {1, 16}, x, ranges), std::nullopt);
  // x // 7 is o * 8 + f // 7, not o * 9 + f // 7 (nor a multiple of 3
  // away from it); a digit of f alone (b = 0) is no digit of x.
  EXPECT_EQ(DigitOfOtherBase(o * 8 + FloorDiv(f, 7), {1, 3}, x, ranges),
            (Digit{7, 3}));
  EXPECT_EQ(DigitOfOtherBase(o * 9 + FloorDiv(f, 7), {1, 3}, x, ranges),
            std::nullopt);
  EXPECT_EQ(DigitOfOtherBase(f, {2, 0}, x, ranges), std::nullopt);
}

TEST(IndexDigits, DigitsThatChainDetermineTheValue) {
  EXPECT_TRUE(DigitsDetermine({{1, 0}}, 100));
  EXPECT_TRUE(DigitsDetermine({{1, 8}, {8, 0}}, 64));
  EXPECT_TRUE(DigitsDetermine({{1, 8}, {8, 8}}, 64));
  EXPECT_FALSE(DigitsDetermine({{1, 8}}, 64));
  EXPECT_FALSE(DigitsDetermine({{8, 0}}, 64));  // the low digit is missing
  EXPECT_TRUE(DigitsDetermine({{1, 8}}, 8));    // one period is all of it
  EXPECT_TRUE(DigitsDetermine({}, 1));
}

}  // namespace
}  // namespace lathe
