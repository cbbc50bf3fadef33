#include "compiler/arith/int_bounds.h"

#include <gtest/gtest.h>

namespace lathe {
namespace {

TEST(IntBounds, AffineExpression) {
  Expr i = Var("i"), j = Var("j");
  VarRanges ranges{{i.get(), Interval::Extent(4)},
                   {j.get(), Interval::Extent(8)}};
  Interval b = BoundOf(i * 8 + j - 3, ranges);
  EXPECT_EQ(b.min, -3);
  EXPECT_EQ(b.max, 28);
}

TEST(IntBounds, DivAndMod) {
  Expr i = Var("i");
  VarRanges ranges{{i.get(), Interval::Extent(20)}};
  EXPECT_EQ(BoundOf(FloorDiv(i, 8), ranges).max, 2);
  Interval m = BoundOf(FloorMod(i, 8), ranges);
  EXPECT_EQ(m.min, 0);
  EXPECT_EQ(m.max, 7);
  VarRanges small{{i.get(), {2, 5}}};
  EXPECT_EQ(BoundOf(FloorMod(i, 8), small).max, 5);
}

TEST(IntBounds, UnknownVarIsUnbounded) {
  EXPECT_FALSE(BoundOf(Var("x") + 1, {}).is_bounded());
  EXPECT_FALSE(ProvablyTrue(Var("x") < 4, {}));
}

TEST(IntBounds, ComparisonThroughDifference) {
  Expr i = Var("i");
  VarRanges ranges{{i.get(), Interval::Extent(100)}};
  // Interval arithmetic alone cannot prove i < i + 1; the difference can.
  EXPECT_TRUE(ProvablyTrue(i < i + 1, ranges));
  EXPECT_TRUE(ProvablyFalse(i + 1 <= i, ranges));
}

}  // namespace
}  // namespace lathe
