#include "compiler/te/tensor.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"

namespace lathe {
namespace {

te::Tensor MatmulOutput(const te::Tensor& a, const te::Tensor& b) {
  te::ReduceAxis k = te::MakeReduceAxis(a.shape()[1], "k");
  return te::ComputeReduction(
      "C", {a.shape()[0], b.shape()[1]}, {"i", "j"},
      [&](const std::vector<Expr>& ax) {
        return te::Sum(a({ax[0], k.var}) * b({k.var, ax[1]}), {k});
      });
}

TEST(TensorExpression, MatmulBecomesOneReductionBlock) {
  te::Tensor a = te::Placeholder("A", {4, 3});
  te::Tensor b = te::Placeholder("B", {3, 5});
  te::Tensor c = MatmulOutput(a, b);
  Program p = te::CreateProgram("matmul", {a, b}, {c}).value();
  EXPECT_EQ(PrintProgram(p),
            "program matmul(A: float32[4, 3], B: float32[3, 5]) -> (C: "
            "float32[4, 5])\n"
            "block root():\n"
            "  for i in range(4):\n"
            "    for j in range(5):\n"
            "      for k in range(3):\n"
            "        block C(vi = spatial(4, i), vj = spatial(5, j), vk = "
            "reduce(3, k)):\n"
            "          reads C[vi, vj], A[vi, vk], B[vk, vj]\n"
            "          writes C[vi, vj]\n"
            "          init:\n"
            "            C[vi, vj] = 0.0f\n"
            "          C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n");
}

TEST(TensorExpression, IntermediatesAreAllocatedByRoot) {
  te::Tensor x = te::Placeholder("X", {8});
  te::Tensor y = te::Compute("Y", {8}, {"i"}, [&](const std::vector<Expr>& ax) {
    return x({ax[0]}) * 2.0;
  });
  te::Tensor z = te::Compute("Z", {8}, {"i"}, [&](const std::vector<Expr>& ax) {
    return Max(y({ax[0]}), Expr(0.0));
  });
  Program p = te::CreateProgram("f", {x}, {z}).value();
  ASSERT_EQ(p.root->alloc_buffers.size(), 1u);
  EXPECT_EQ(p.root->alloc_buffers[0]->name, "Y");
  ASSERT_EQ(p.Blocks().size(), 2u);
  EXPECT_EQ(p.Blocks()[0]->name, "Y");
  // Loop names are unique across stages.
  EXPECT_NE(p.FindLoop("i"), nullptr);
  EXPECT_NE(p.FindLoop("i_1"), nullptr);
}

TEST(TensorExpression, RejectsUnlistedPlaceholder) {
  te::Tensor x = te::Placeholder("X", {8});
  te::Tensor w = te::Placeholder("W", {8});
  te::Tensor y = te::Compute("Y", {8}, {"i"}, [&](const std::vector<Expr>& ax) {
    return x({ax[0]}) + w({ax[0]});
  });
  auto p = te::CreateProgram("f", {x}, {y});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("W"), std::string::npos);
}

}  // namespace
}  // namespace lathe
