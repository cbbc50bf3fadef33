#include "compiler/schedule/analysis/index_digits.h"

#include <gtest/gtest.h>

#include <limits>

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
