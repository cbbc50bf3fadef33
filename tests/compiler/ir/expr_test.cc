#include "compiler/ir/expr.h"

#include <gtest/gtest.h>

#include "compiler/ir/buffer.h"
#include "compiler/ir/expr_functor.h"

namespace lathe {
namespace {

TEST(Expr, FoldsIntegerConstants) {
  Expr e = (Expr(6) + 4) * 3 - 2;
  ASSERT_TRUE(e.is_int_imm());
  EXPECT_EQ(e.int_value(), 28);
  EXPECT_EQ(FloorDiv(-7, 2).int_value(), -4);
  EXPECT_EQ(FloorMod(-7, 2).int_value(), 1);
}

TEST(Expr, KeepsIdentitiesReadable) {
  Expr i = Var("i");
  EXPECT_TRUE((i + 0).same_as(i));
  EXPECT_TRUE((i * 1).same_as(i));
  EXPECT_EQ((i * 0).int_value(), 0);
}

TEST(Expr, ComparisonIsBool) {
  Expr i = Var("i");
  EXPECT_TRUE((i < 4).dtype().is_bool());
  EXPECT_TRUE((Expr(3) < 4).is_int_imm());
  EXPECT_EQ((Expr(3) < 4).int_value(), 1);
}

TEST(Expr, LoadCarriesBufferType) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {4, 4});
  Expr load = Load(a, {Var("i"), Var("j")});
  EXPECT_EQ(load.dtype(), DType::Float32());
  EXPECT_EQ(load.ToString(), "A[i, j]");
}

TEST(ExprFunctor, SubstituteReplacesOnlyTheGivenVar) {
  Expr i = Var("i"), j = Var("j"), i2 = Var("i");
  VarMap map;
  map[i] = j * 2;
  Expr e = Substitute(i + i2, map);
  EXPECT_EQ(e.ToString(), "j * 2 + i");
  EXPECT_TRUE(UsesVar(e, i2));
  EXPECT_FALSE(UsesVar(e, i));
}

TEST(DType, ParsesAndPrints) {
  EXPECT_EQ(DType::Parse("float32").value(), DType::Float32());
  EXPECT_EQ(DType::Parse("i8").value(), DType::Int8());
  EXPECT_EQ(DType::Float16().ToString(), "float16");
  EXPECT_FALSE(DType::Parse("float64").ok());
}

}  // namespace
}  // namespace lathe
