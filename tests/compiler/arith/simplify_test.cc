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
