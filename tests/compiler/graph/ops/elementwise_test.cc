// The elementwise operators: unary, binary and variadic with broadcasting,
// comparisons, Clip, Where, Cast.
#include <cmath>

#include "gtest/gtest.h"
#include "tests/compiler/graph/ops/op_check.h"

namespace lathe::graph {
namespace {

using namespace testing;  // NOLINT

TEST(UnaryOps, ComputeTheirFunctions) {
  TensorData x = Floats({3}, {-2, 0, 1.5});
  ExpectOutput(RunOp("Relu", {x}), F32({3}), {0, 0, 1.5});
  ExpectOutput(RunOp("Neg", {x}), F32({3}), {2, 0, -1.5});
  ExpectOutput(RunOp("Abs", {x}), F32({3}), {2, 0, 1.5});
  ExpectOutput(RunOp("Sigmoid", {x}), F32({3}),
               {1 / (1 + std::exp(2.0)), 0.5, 1 / (1 + std::exp(-1.5))});
  ExpectOutput(RunOp("Erf", {x}), F32({3}), {std::erf(-2.0), 0, std::erf(1.5)});
  ExpectOutput(RunOp("LeakyRelu", {x}, {{"alpha", 0.5}}), F32({3}),
               {-1, 0, 1.5});
  ExpectOutput(RunOp("HardSigmoid", {x}, {{"alpha", 0.2}, {"beta", 0.5}}),
               F32({3}), {0.1, 0.5, 0.8});
  ExpectOutput(RunOp("HardSwish", {x}), F32({3}),
               {-2 * (0.5 - 2.0 / 6), 0, 1.5 * (0.5 + 0.25)});
  ExpectOutput(RunOp("Sqrt", {Floats({2}, {4, 9})}), F32({2}), {2, 3});
}

TEST(UnaryOps, NumericOpsKeepIntegerTypes) {
  ExpectOutput(RunOp("Neg", {Ints({3, -4})}), TensorType{DType::Int64(), {2}},
               {-3, 4});
  ExpectRefused(RunOp("Exp", {Ints({1})}), {"Exp_0", "int64"});
}

TEST(BinaryOps, BroadcastNumpyStyle) {
  TensorData a = Floats({2, 1}, {1, 2});
  TensorData b = Floats({3}, {10, 20, 30});
  ExpectOutput(RunOp("Add", {a, b}), F32({2, 3}), {11, 21, 31, 12, 22, 32});
  ExpectOutput(RunOp("Sub", {a, b}), F32({2, 3}), {-9, -19, -29, -8, -18, -28});
  ExpectRefused(RunOp("Mul", {Floats({2}, {1, 2}), Floats({3}, {1, 2, 3})}),
                {"Mul_0", "broadcast"});
  ExpectRefused(RunOp("Add", {Floats({1}, {1}), Ints({1})}),
                {"Add_0", "int64"});
}

TEST(BinaryOps, IntegerDivisionTruncates) {
  ExpectOutput(RunOp("Div", {Ints({7, -7}), Ints({2, 2})}),
               TensorType{DType::Int64(), {2}}, {3, -3});
}

TEST(BinaryOps, PowAcceptsAnIntegerExponent) {
  ExpectOutput(RunOp("Pow", {Floats({2}, {3, 2}), Ints({2}, {})}), F32({2}),
               {9, 4});
}

TEST(VariadicOps, FoldAllInputs) {
  TensorData a = Floats({2}, {1, 5});
  TensorData b = Floats({2}, {4, 2});
  TensorData c = Floats({1}, {3});
  ExpectOutput(RunOp("Max", {a, b, c}), F32({2}), {4, 5});
  ExpectOutput(RunOp("Min", {a, b, c}), F32({2}), {1, 2});
  ExpectOutput(RunOp("Sum", {a, b, c}), F32({2}), {8, 10});
  ExpectOutput(RunOp("Mean", {a, b, c}), F32({2}), {8.0 / 3, 10.0 / 3});
  ExpectOutput(RunOp("Sum", {a}), F32({2}), {1, 5});
}

TEST(CompareOps, GiveBool) {
  TensorData a = Floats({3}, {1, 2, 3});
  TensorData b = Floats({1}, {2});
  const TensorType bool3{DType::Bool(), {3}};
  ExpectOutput(RunOp("Equal", {a, b}), bool3, {0, 1, 0});
  ExpectOutput(RunOp("Less", {a, b}), bool3, {1, 0, 0});
  ExpectOutput(RunOp("Greater", {a, b}), bool3, {0, 0, 1});
  ExpectOutput(RunOp("Equal", {Ints({1, 2}), Ints({2, 2})}),
               TensorType{DType::Bool(), {2}}, {0, 1});
}

TEST(Clip, ClampsToOptionalBounds) {
  TensorData x = Floats({4}, {-3, -1, 1, 3});
  ExpectOutput(RunOp("Clip", {x, Scalar(-2), Scalar(2)}), F32({4}),
               {-2, -1, 1, 2});
  ExpectOutput(RunOp("Clip", {x, std::nullopt, Scalar(0)}), F32({4}),
               {-3, -1, 0, 0});
  ExpectOutput(RunOp("Clip", {x}), F32({4}), {-3, -1, 1, 3});
  ExpectRefused(RunOp("Clip", {x, Floats({2}, {0, 1})}), {"Clip_0", "scalar"});
}

TEST(Where, SelectsWithBroadcast) {
  TensorData c(DType::Bool(), {2});
  c.values = {1, 0};
  ExpectOutput(RunOp("Where", {c, Floats({2, 1}, {1, 2}), Scalar(9)}),
               F32({2, 2}), {1, 9, 2, 9});
  ExpectRefused(RunOp("Where", {Floats({1}, {1}), Scalar(1), Scalar(2)}),
                {"Where_0", "bool"});
}

TEST(UnaryOps, HostOnlyFunctions) {
  TensorData x = Floats({3}, {-0.5, 0, 2.5});
  ExpectOutput(RunOp("Round", {x}), F32({3}), {-0, 0, 2});
  ExpectOutput(RunOp("Sign", {x}), F32({3}), {-1, 0, 1});
  ExpectOutput(RunOp("Sin", {x}), F32({3}), {std::sin(-0.5), 0, std::sin(2.5)});
  ExpectOutput(RunOp("Softsign", {x}), F32({3}), {-0.5 / 1.5, 0, 2.5 / 3.5});
  ExpectOutput(RunOp("Shrink", {x}, {{"lambd", 1.0}, {"bias", 0.5}}), F32({3}),
               {0, 0, 2});
}

TEST(BinaryOps, PReluScalesNegatives) {
  ExpectOutput(RunOp("PRelu", {Floats({2, 2}, {-1, 2, -3, 4}),
                               Floats({2}, {0.5, 0.25})}),
               F32({2, 2}), {-0.5, 2, -1.5, 4});
}

TEST(Mod, IntegerAndFloatRemainders) {
  ExpectOutput(RunOp("Mod", {Ints({7, -7, 7}), Ints({3, 3, -3})}),
               TensorType{DType::Int64(), {3}}, {1, 2, -2});
  ExpectOutput(RunOp("Mod", {Floats({2}, {7.5, -7.5}), Floats({1}, {2})},
                     {{"fmod", int64_t{1}}}),
               F32({2}), {1.5, -1.5});
  ExpectRefused(RunOp("Mod", {Floats({1}, {1}), Floats({1}, {1})}),
                {"Mod_0", "fmod"});
}

TEST(Cast, ConvertsAndTruncates) {
  TensorData x = Floats({3}, {-1.7, 0.2, 2.9});
  ExpectOutput(RunOp("Cast", {x}, {{"to", int64_t{7}}}),
               TensorType{DType::Int64(), {3}}, {-1, 0, 2});
  ExpectOutput(RunOp("Cast", {x}, {{"to", int64_t{9}}}),
               TensorType{DType::Bool(), {3}}, {1, 1, 1});
  ExpectOutput(RunOp("Cast", {Ints({3})}, {{"to", int64_t{1}}}), F32({1}), {3});
  ExpectRefused(RunOp("Cast", {x}, {{"to", int64_t{8}}}),
                {"Cast_0", "attribute to=8"});
  ExpectOutput(RunOp("CastLike", {x, Ints({0})}),
               TensorType{DType::Int64(), {3}}, {-1, 0, 2});
}

}  // namespace
}  // namespace lathe::graph
