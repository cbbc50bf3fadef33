#include "compiler/ir/printer.h"

#include <gtest/gtest.h>

namespace lathe {
namespace {

TEST(Printer, MinimalParentheses) {
  Expr i = Var("i"), j = Var("j");
  EXPECT_EQ(PrintExpr((i + j) * 4), "(i + j) * 4");
  EXPECT_EQ(PrintExpr(i + j * 4), "i + j * 4");
  EXPECT_EQ(PrintExpr(i - (j - 1)), "i - (j - 1)");
  EXPECT_EQ(PrintExpr(FloorMod(FloorDiv(i, 4), 2)), "i // 4 % 2");
  EXPECT_EQ(PrintExpr(Select(i < 3, Expr(1.5), Expr(0.0))),
            "select(i < 3, 1.5f, 0.0f)");
}

}  // namespace
}  // namespace lathe
