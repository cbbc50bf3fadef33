#include "compiler/arith/simplify.h"

#include <gtest/gtest.h>

namespace lathe {
namespace {

TEST(Simplify, CollectsLinearTerms) {
  Expr i = Var("i"), j = Var("j");
  EXPECT_EQ(Simplify(i * 4 + j - i * 4 + 3 - 1).ToString(), "j + 2");
  EXPECT_EQ(Simplify((i + 1) * 3 - i).ToString(), "i * 2 + 3");
}

TEST(Simplify, CancelsSplitOfFuse) {
  // fused = i * 8 + j with j in [0, 8): fused // 8 == i, fused % 8 == j.
  Expr i = Var("i"), j = Var("j");
  VarRanges ranges{{i.get(), Interval::Extent(16)},
                   {j.get(), Interval::Extent(8)}};
  Expr fused = i * 8 + j;
  EXPECT_TRUE(Simplify(FloorDiv(fused, 8), ranges).same_as(i));
  EXPECT_TRUE(Simplify(FloorMod(fused, 8), ranges).same_as(j));
  // Without ranges nothing is known of j.
  EXPECT_EQ(Simplify(FloorDiv(fused, 8)).ToString(), "i + j // 8");
}

TEST(Simplify, RecombinesTheDigitsOfAFuseOfSplitParts) {
  // A loop split into [outer, a, b] whose a and b parts were fused again
  // into f leaves (f // b) * b + f % b, which is f; the sum of the digits
  // under a coarser divisor, (f // 64) * 4 + (f % 64) // 16, is f // 16.
  Expr f = Var("f"), s = Var("s");
  EXPECT_EQ(
      Simplify(s * 128 + FloorDiv(f, 64) * 64 + FloorMod(f, 64)).ToString(),
      "s * 128 + f");
  EXPECT_EQ(
      Simplify(FloorDiv(f, 64) * 4 + FloorDiv(FloorMod(f, 64), 16)).ToString(),
      "f // 16");
  // Scaled pairs merge; mismatched coefficients or divisors do not.
  EXPECT_EQ(Simplify(FloorDiv(f, 8) * 24 + FloorMod(f, 8) * 3).ToString(),
            "f * 3");
  EXPECT_EQ(Simplify(FloorDiv(f, 8) * 4 + FloorMod(f, 8)).ToString(),
            "f // 8 * 4 + f % 8");
  EXPECT_EQ(Simplify(FloorDiv(f, 8) * 8 + FloorMod(s, 8)).ToString(),
            "f // 8 * 8 + s % 8");
  // Three parts fused: the middle digit is (f // 7) % 4, which merges with
  // f // 28 first, then with f % 7; (f // 7) % 3 does not (3 * 7 is not 28).
  EXPECT_EQ(Simplify(s * 112 + FloorDiv(f, 28) * 28 +
                     FloorMod(FloorDiv(f, 7), 4) * 7 + FloorMod(f, 7))
                .ToString(),
            "s * 112 + f");
  EXPECT_EQ(Simplify(FloorDiv(f, 28) * 28 + FloorMod(FloorDiv(f, 7), 3) * 7 +
                     FloorMod(f, 7))
                .ToString(),
            "f // 28 * 28 + f // 7 % 3 * 7 + f % 7");
  // (f // 8) % 4 still pairs with (f // 8) // 4 read as a digit of f // 8.
  EXPECT_EQ(
      Simplify(FloorMod(FloorDiv(f, 8), 4) + FloorDiv(f, 32) * 4).ToString(),
      "f // 8");
  // A digit of a digit: (f % 64) % 16 is f % 16; (f % 24) % 16 stays.
  EXPECT_EQ(Simplify(FloorMod(FloorMod(f, 64), 16)).ToString(), "f % 16");
  EXPECT_EQ(Simplify(FloorMod(FloorMod(f, 24), 16)).ToString(), "f % 24 % 16");
}

TEST(Simplify, NestedFloorDiv) {
  Expr i = Var("i");
  EXPECT_EQ(Simplify(FloorDiv(FloorDiv(i, 4), 2)).ToString(), "i // 8");
}

TEST(Simplify, DecidesComparisonsFromRanges) {
  Expr i = Var("i"), j = Var("j");
  VarRanges ranges{{i.get(), Interval::Extent(4)},
                   {j.get(), Interval::Extent(4)}};
  Expr always = i * 4 + j < 16;
  Expr sometimes = i * 4 + j < 15;
  EXPECT_EQ(Simplify(always, ranges).ToString(), "true");
  EXPECT_EQ(Simplify(sometimes, ranges).ToString(), sometimes.ToString());
  EXPECT_TRUE(Simplify(Min(i, i + 1), ranges).same_as(i));
}

}  // namespace
}  // namespace lathe
