// Gemm and MatMul: transposes, alpha/beta, broadcast bias, batched and
// vector operands.
#include "gtest/gtest.h"
#include "tests/compiler/graph/ops/op_check.h"

namespace lathe::graph {
namespace {

using namespace testing;  // NOLINT
using Ints64 = std::vector<int64_t>;

TEST(Gemm, TransposesScalesAndAddsC) {
  TensorData a = Floats({2, 2}, {1, 2, 3, 4});
  TensorData b = Floats({2, 2}, {5, 6, 7, 8});
  ExpectOutput(RunOp("Gemm", {a, b}), F32({2, 2}), {19, 22, 43, 50});
  ExpectOutput(RunOp("Gemm", {a, b}, {{"transB", int64_t{1}}}), F32({2, 2}),
               {17, 23, 39, 53});
  ExpectOutput(RunOp("Gemm", {a, b}, {{"transA", int64_t{1}}}), F32({2, 2}),
               {26, 30, 38, 44});
  ExpectOutput(RunOp("Gemm", {a, b, Floats({2}, {1, 2})},
                     {{"alpha", 2.0}, {"beta", 0.5}}),
               F32({2, 2}), {38.5, 45, 86.5, 101});
  ExpectRefused(RunOp("Gemm", {a, Floats({3, 2}, {1, 2, 3, 4, 5, 6})}),
                {"Gemm_0", "inner extents differ"});
}

TEST(MatMul, BatchesBroadcastAndVectors) {
  TensorData a = Floats({2, 1, 2}, {1, 2, 3, 4});  // two 1x2 rows
  TensorData b = Floats({2, 1}, {10, 100});
  ExpectOutput(RunOp("MatMul", {a, b}), F32({2, 1, 1}), {210, 430});
  ExpectOutput(RunOp("MatMul", {Floats({2}, {1, 2}), b}), F32({1}), {210});
  ExpectOutput(
      RunOp("MatMul", {Floats({2, 2}, {1, 2, 3, 4}), Floats({2}, {1, 1})}),
      F32({2}), {3, 7});
  ExpectOutput(RunOp("MatMul", {Floats({2}, {1, 2}), Floats({2}, {3, 4})}),
               F32({}), {11});
  OpRun batched = RunOp("MatMul", {TensorData(DType::Float32(), {2, 1, 3, 4}),
                                   TensorData(DType::Float32(), {5, 4, 6})});
  ASSERT_TRUE(batched.types.ok());
  EXPECT_EQ((*batched.types)[0].shape, (Ints64{2, 5, 3, 6}));
  ExpectRefused(RunOp("MatMul", {TensorData(DType::Float32(), {2, 3, 4}),
                                 TensorData(DType::Float32(), {3, 4, 5})}),
                {"MatMul_0", "broadcast"});
}

}  // namespace
}  // namespace lathe::graph
