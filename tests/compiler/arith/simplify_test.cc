#include "compiler/arith/simplify.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

#include "tests/compiler/arith/eval_index.h"

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
  // f // 28 first, then with f % 7; (f // 7) % 3 does not merge with f //
  // 28 (3 * 7 is not 28), only with f % 7 below it: the digits below 21.
  EXPECT_EQ(Simplify(s * 112 + FloorDiv(f, 28) * 28 +
                     FloorMod(FloorDiv(f, 7), 4) * 7 + FloorMod(f, 7))
                .ToString(),
            "s * 112 + f");
  EXPECT_EQ(Simplify(FloorDiv(f, 28) * 28 + FloorMod(FloorDiv(f, 7), 3) * 7 +
                     FloorMod(f, 7))
                .ToString(),
            "f // 28 * 28 + f % 21");
  // A digit and the digits below it: ((f // 14) % 8) * 14 + f % 14 is
  // f % 112, and with a coarser low digit, ((f // 14) % 8) * 7 +
  // (f % 14) // 2 is (f % 112) // 2; a coefficient that does not match
  // keeps them apart.
  EXPECT_EQ(
      Simplify(FloorMod(FloorDiv(f, 14), 8) * 14 + FloorMod(f, 14)).ToString(),
      "f % 112");
  EXPECT_EQ(
      Simplify(FloorMod(FloorDiv(f, 14), 8) * 7 + FloorDiv(FloorMod(f, 14), 2))
          .ToString(),
      "f % 112 // 2");
  EXPECT_EQ(
      Simplify(FloorMod(FloorDiv(f, 14), 8) * 13 + FloorMod(f, 14)).ToString(),
      "f // 14 % 8 * 13 + f % 14");
  // (f // 8) % 4 still pairs with (f // 8) // 4 read as a digit of f // 8.
  EXPECT_EQ(
      Simplify(FloorMod(FloorDiv(f, 8), 4) + FloorDiv(f, 32) * 4).ToString(),
      "f // 8");
  // A digit of a digit: (f % 64) % 16 is f % 16; (f % 24) % 16 stays.
  EXPECT_EQ(Simplify(FloorMod(FloorMod(f, 64), 16)).ToString(), "f % 16");
  EXPECT_EQ(Simplify(FloorMod(FloorMod(f, 24), 16)).ToString(), "f % 24 % 16");
}

// The merges of digits hold for every value, negative ones included: a
// digit (f // C) % a (or f // C) times k * C / b beside (f % C) // b times
// k, for every such C, a, b and k, simplified, evaluates as written.
TEST(Simplify, MergedDigitsKeepTheirValue) {
  Expr f = Var("f");
  int merged = 0;
  for (int64_t c : {2, 4, 6, 7, 12, 14}) {
    for (int64_t a : {0, 2, 3, 8}) {  // 0: the high term is f // C
      for (int64_t b = 1; b <= c; ++b) {
        if (c % b != 0) continue;
        for (int64_t k : {1, 3, -2}) {
          const Expr high =
              a == 0 ? FloorDiv(f, c) : FloorMod(FloorDiv(f, c), a);
          const Expr low =
              b == 1 ? FloorMod(f, c) : FloorDiv(FloorMod(f, c), b);
          const Expr e = high * (k * (c / b)) + low * k;
          const Expr simplified = Simplify(e);
          merged += simplified.ToString().find(" % ") == std::string::npos ||
                    simplified.ToString().find(" + ") == std::string::npos;
          for (int64_t v = -3 * c * 8; v <= 3 * c * 8; ++v) {
            const std::map<const ExprNode*, int64_t> at = {{f.get(), v}};
            ASSERT_EQ(testing::EvalIndex(simplified, at),
                      testing::EvalIndex(e, at))
                << e.ToString() << " simplified to " << simplified.ToString()
                << " at f = " << v;
          }
        }
      }
    }
  }
  EXPECT_GT(merged, 100);
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
