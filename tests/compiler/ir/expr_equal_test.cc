#include "compiler/ir/expr_equal.h"

#include <gtest/gtest.h>

#include <cmath>

#include "compiler/ir/buffer.h"

namespace lathe {
namespace {

TEST(ExprEqual, ComparesStructureAndVariablesByIdentity) {
  Expr i = Var("i"), j = Var("j"), other_i = Var("i");
  EXPECT_TRUE(ExprEqual(i * 4 + j, i * 4 + j));
  EXPECT_FALSE(ExprEqual(i * 4 + j, i * 4 + other_i));
  EXPECT_FALSE(ExprEqual(i, other_i));
  EXPECT_FALSE(ExprEqual(i * 4, i * 5));
  EXPECT_FALSE(ExprEqual(i + j, i - j));
  EXPECT_FALSE(ExprEqual(IntImm(1), IntImm(1, DType::Int32())));
}

TEST(ExprEqual, ComparesFunctionsAndBuffersByName) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {8});
  BufferPtr same_name = MakeBuffer("A", DType::Float32(), {8});
  Expr i = Var("i");
  EXPECT_TRUE(ExprEqual(Load(a, {i}), Load(a, {i})));
  EXPECT_FALSE(ExprEqual(Load(a, {i}), Load(same_name, {i})));
  Expr x = Load(a, {i});
  EXPECT_TRUE(
      ExprEqual(Call("exp", {x}, x.dtype()), Call("exp", {x}, x.dtype())));
  EXPECT_FALSE(
      ExprEqual(Call("exp", {x}, x.dtype()), Call("log", {x}, x.dtype())));
}

TEST(ExprEqual, UndefinedEqualsOnlyUndefined) {
  EXPECT_TRUE(ExprEqual(Expr(), Expr()));
  EXPECT_FALSE(ExprEqual(Expr(), IntImm(0)));
  EXPECT_FALSE(ExprEqual(IntImm(0), Expr()));
}

TEST(ExprEqual, FloatsByValueOrByBits) {
  Expr nan = FloatImm(std::nan(""));
  Expr zero = FloatImm(0.0), minus_zero = FloatImm(-0.0);
  EXPECT_FALSE(ExprEqual(nan, FloatImm(std::nan(""))));
  EXPECT_TRUE(ExprEqual(zero, minus_zero));
  EXPECT_TRUE(
      ExprEqual(nan, FloatImm(std::nan("")), FloatImmEquality::kByBits));
  EXPECT_FALSE(ExprEqual(zero, minus_zero, FloatImmEquality::kByBits));
  EXPECT_TRUE(
      ExprEqual(FloatImm(1.5), FloatImm(1.5), FloatImmEquality::kByBits));
}

TEST(ExprsEqual, ComparesTuples) {
  Expr i = Var("i"), j = Var("j");
  EXPECT_TRUE(ExprsEqual({i, j + 1}, {i, j + 1}));
  EXPECT_FALSE(ExprsEqual({i, j}, {j, i}));
  EXPECT_FALSE(ExprsEqual({i}, {i, j}));
  EXPECT_TRUE(ExprsEqual({}, {}));
}

}  // namespace
}  // namespace lathe
