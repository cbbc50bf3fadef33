// Tests of compiler/ir/program.h (and the statement tree of stmt.h it holds):
// parameters in C ABI order, lookups, the loops above a statement, fresh
// names, the accesses of a block and deep copies.
#include "compiler/ir/program.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/te/tensor.h"

namespace lathe {
namespace {

// C[i, j] = sum_k A[i, k] * B[k, j], then D[i, j] = C[i, j] * 2.
Program MatmulScale() {
  te::Tensor a = te::Placeholder("A", {4, 3});
  te::Tensor b = te::Placeholder("B", {3, 5});
  te::ReduceAxis k = te::MakeReduceAxis(3, "k");
  te::Tensor c = te::ComputeReduction(
      "C", {4, 5}, {"i", "j"}, [&](const std::vector<Expr>& ax) {
        return te::Sum(a({ax[0], k.var}) * b({k.var, ax[1]}), {k});
      });
  te::Tensor d =
      te::Compute("D", {4, 5}, {"i", "j"}, [&](const std::vector<Expr>& ax) {
        return c({ax[0], ax[1]}) * 2.0;
      });
  return te::CreateProgram("matmul_scale", {a, b}, {d}).value();
}

std::vector<std::string> Names(const std::vector<BufferPtr>& buffers) {
  std::vector<std::string> names;
  for (const BufferPtr& b : buffers) names.push_back(b->name);
  return names;
}

TEST(Program, ParamsAreInputsThenOutputs) {
  Program p = MatmulScale();
  EXPECT_EQ(Names(p.Params()), (std::vector<std::string>{"A", "B", "D"}));
  EXPECT_TRUE(p.IsInput(p.inputs[0].get()));
  EXPECT_FALSE(p.IsInput(p.outputs[0].get()));
  EXPECT_TRUE(p.IsOutput(p.outputs[0].get()));
}

TEST(Program, FindsBlocksInExecutionOrder) {
  Program p = MatmulScale();
  std::vector<std::string> blocks;
  for (BlockNode* b : p.Blocks()) blocks.push_back(b->name);
  EXPECT_EQ(blocks, (std::vector<std::string>{"C", "D"}));
  EXPECT_NE(p.FindBlock("C"), nullptr);
  EXPECT_EQ(p.FindBlock("nothing"), nullptr);
  EXPECT_EQ(p.FindLoop("nothing"), nullptr);
}

TEST(Program, LoopsAboveABlockStopAtTheEnclosingBlock) {
  Program p = MatmulScale();
  BlockNode* c = p.FindBlock("C");
  std::vector<ForNode*> loops = p.LoopsAbove(c);
  ASSERT_EQ(loops.size(), 3u);  // i, j, k
  EXPECT_EQ(loops[0]->extent, 4);
  EXPECT_EQ(loops[1]->extent, 5);
  EXPECT_EQ(loops[2]->extent, 3);
  EXPECT_EQ(p.EnclosingBlock(c), p.root.get());
  EXPECT_EQ(p.ParentOf(p.root.get()), nullptr);
  EXPECT_EQ(p.ParentOf(c), loops[2]);
  EXPECT_EQ(p.ParentOf(loops[1]), loops[0]);
  // A statement of another program has no parent, loops or block here.
  Program other = MatmulScale();
  BlockNode* foreign = other.FindBlock("C");
  EXPECT_EQ(p.ParentOf(foreign), nullptr);
  EXPECT_TRUE(p.LoopsAbove(foreign).empty());
  EXPECT_EQ(p.EnclosingBlock(foreign), nullptr);
}

TEST(Program, FreshNamesAvoidEveryNameInUse) {
  Program p = MatmulScale();
  EXPECT_EQ(p.FreshName("unused"), "unused");
  for (const std::string used : {"A", "C", "i", "k"}) {
    std::string fresh = p.FreshName(used);
    EXPECT_NE(fresh, used);
    EXPECT_EQ(p.FreshName(fresh), fresh);
  }
}

TEST(Program, AccessesOfABlockAreItsOwn) {
  Program p = MatmulScale();
  BlockAccesses c = AccessesOf(*p.FindBlock("C"));
  std::vector<std::string> reads;
  for (const BufferAccess& r : c.reads) reads.push_back(r.buffer->name);
  // The update reads C itself, then A and B (first appearance order).
  EXPECT_NE(std::find(reads.begin(), reads.end(), "A"), reads.end());
  EXPECT_NE(std::find(reads.begin(), reads.end(), "B"), reads.end());
  // The init and the update both store to C[i, j].
  ASSERT_FALSE(c.writes.empty());
  for (const BufferAccess& w : c.writes) {
    EXPECT_EQ(w.buffer->name, "C");
    EXPECT_EQ(w.indices.size(), 2u);
  }
  EXPECT_EQ(Names(BuffersWritten(*p.FindBlock("D"))),
            (std::vector<std::string>{"D"}));
  EXPECT_EQ(Names(BuffersRead(*p.FindBlock("D"))),
            (std::vector<std::string>{"C"}));
}

TEST(Program, CopiesAreDeep) {
  Program a = MatmulScale();
  Program b = a;
  b.FindBlock("C")->name = "renamed";
  EXPECT_NE(a.FindBlock("C"), nullptr);
  EXPECT_EQ(b.FindBlock("C"), nullptr);
  EXPECT_EQ(b.Blocks().size(), a.Blocks().size());
}

}  // namespace
}  // namespace lathe
