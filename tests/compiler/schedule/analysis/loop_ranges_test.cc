// Tests of compiler/schedule/analysis/loop_ranges.h: the ranges of the loops
// above a statement or in a whole program, and SimplifyBindings.
#include "compiler/schedule/analysis/loop_ranges.h"

#include <gtest/gtest.h>

#include <vector>

#include "compiler/te/tensor.h"

namespace lathe {
namespace {

// C[i, j] = sum_k A[i, k] * B[k, j] over i < 4, j < 5, k < 3; with
// `then_add`, D = C + 1 after it (two nests under the root).
Program Matmul(bool then_add = false) {
  te::Tensor a = te::Placeholder("A", {4, 3});
  te::Tensor b = te::Placeholder("B", {3, 5});
  te::ReduceAxis k = te::MakeReduceAxis(3, "k");
  te::Tensor c = te::ComputeReduction(
      "C", {4, 5}, {"i", "j"}, [&](const std::vector<Expr>& ax) {
        return te::Sum(a({ax[0], k.var}) * b({k.var, ax[1]}), {k});
      });
  if (!then_add) return te::CreateProgram("matmul", {a, b}, {c}).value();
  te::Tensor d =
      te::Compute("D", {4, 5}, {"i", "j"}, [&](const std::vector<Expr>& ax) {
        return c({ax[0], ax[1]}) + FloatImm(1.0f);
      });
  return te::CreateProgram("matmul_add", {a, b}, {d}).value();
}

TEST(LoopRanges, AboveABlockAreItsLoopsFromZeroToExtentMinusOne) {
  Program p = Matmul();
  const BlockNode* c = p.FindBlock("C");
  VarRanges ranges = LoopRangesAbove(p, c);
  ASSERT_EQ(ranges.size(), 3u);
  for (const ForNode* loop : p.LoopsAbove(c)) {
    ASSERT_TRUE(ranges.count(loop->var.get()));
    EXPECT_EQ(ranges.at(loop->var.get()).min, 0);
    EXPECT_EQ(ranges.at(loop->var.get()).max, loop->extent - 1);
  }
  // Nothing is above the root.
  EXPECT_TRUE(LoopRangesAbove(p, p.root.get()).empty());
}

TEST(LoopRanges, AllCoversEveryLoop) {
  Program p = Matmul();
  VarRanges all = AllLoopRanges(p);
  VarRanges above = LoopRangesAbove(p, p.FindBlock("C"));
  ASSERT_EQ(all.size(), 3u);
  for (const auto& [var, range] : above) {
    ASSERT_TRUE(all.count(var));
    EXPECT_EQ(all.at(var).min, range.min);
    EXPECT_EQ(all.at(var).max, range.max);
  }
}

TEST(LoopRanges, SimplifyBindingsDropsAPredicateThatAlwaysHolds) {
  Program p = Matmul();
  BlockNode* c = p.FindBlock("C");
  const ForNode* i = p.LoopsAbove(c)[0];
  c->predicate = i->var < 4;  // holds for every i in [0, 4)
  SimplifyBindings(&p);
  ASSERT_TRUE(c->predicate.is_int_imm());
  EXPECT_EQ(c->predicate.int_value(), 1);
  // One that may fail stays.
  c->predicate = i->var < 3;
  SimplifyBindings(&p);
  EXPECT_FALSE(c->predicate.is_int_imm());
}

TEST(LoopRanges, SimplifyBindingsInAScopeLeavesTheOtherBlocks) {
  Program p = Matmul(/*then_add=*/true);
  BlockNode* c_block = p.FindBlock("C");
  BlockNode* d_block = p.FindBlock("D");
  ASSERT_NE(c_block, nullptr);
  ASSERT_NE(d_block, nullptr);
  ForNode* c_outer = p.LoopsAbove(c_block)[0];
  c_block->predicate = c_outer->var < 4;
  d_block->predicate = p.LoopsAbove(d_block)[0]->var < 4;
  SimplifyBindings(&p, c_outer);
  ASSERT_TRUE(c_block->predicate.is_int_imm());
  EXPECT_EQ(c_block->predicate.int_value(), 1);
  EXPECT_FALSE(d_block->predicate.is_int_imm());
  // The whole program: D's too.
  SimplifyBindings(&p);
  EXPECT_TRUE(d_block->predicate.is_int_imm());
}

}  // namespace
}  // namespace lathe
