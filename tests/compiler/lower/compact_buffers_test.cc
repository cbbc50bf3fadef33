// Golden structure checks of CompactBuffers (compiler/lower/compact_buffers.h).
#include "compiler/lower/compact_buffers.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/lower/lower_blocks.h"
#include "compiler/lower/lowered_form.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/schedule.h"
#include "tests/compiler/lower/lowering_test_util.h"

namespace lathe {
namespace {

using testing::Contains;

// Matmul tiled i_0, j_0, k, i_1, j_1 by 4 x 16, accumulated in a local
// cache written back under the tile loop j_0: the GEMM micro-kernel shape.
Program TiledMatmulWithLocalAccumulator(const std::string& spec,
                                        LoopRV* at = nullptr) {
  ConcreteSchedule sch(testing::InitialProgramOf(spec));
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  std::vector<LoopRV> i =
      sch.Split(loops[0], {Factor(), Factor(int64_t{4})}).value();
  std::vector<LoopRV> j =
      sch.Split(loops[1], {Factor(), Factor(int64_t{16})}).value();
  EXPECT_TRUE(sch.Reorder({i[0], j[0], loops[2], i[1], j[1]}).ok());
  BlockRV write_back = sch.CacheWrite(c, 0, "local").value();
  absl::Status moved =
      sch.ReverseComputeAt(write_back, at != nullptr ? *at : j[0]);
  EXPECT_TRUE(moved.ok()) << moved << "\n" << PrintProgram(sch.program());
  return sch.program();
}

TEST(CompactBuffers, LocalAccumulatorOfMatmulBecomesRegisterTile) {
  const std::string spec = "matmul:M=32,N=64,K=16";
  Program p = TiledMatmulWithLocalAccumulator(spec);
  ASSERT_TRUE(LowerBlocks(&p).ok());
  std::string before = PrintProgram(p);
  EXPECT_TRUE(Contains(before, "alloc C_local: float32[32, 64] local"))
      << before;
  CompactStats stats;
  ASSERT_TRUE(CompactBuffers(&p, &stats).ok());
  std::string text = PrintProgram(p);
  // Allocated once per tile, directly inside the tile loop j_0, 4 x 16.
  EXPECT_TRUE(Contains(text,
                       "    for j_0 in range(4):\n      block j_0_alloc():\n"
                       "        alloc C_local: float32[4, 16] local\n"))
      << text;
  // Accesses are offsets into the tile.
  EXPECT_TRUE(Contains(text, "C_local[i_1, j_1] = C_local[i_1, j_1] + A["))
      << text;
  EXPECT_TRUE(Contains(text, "= C_local[ax0, ax1]")) << text;
  EXPECT_FALSE(Contains(text, "C_local: float32[32, 64]")) << text;
  EXPECT_EQ(stats.compacted, std::vector<std::string>{"C_local"});
  EXPECT_TRUE(stats.large_local.empty());
  EXPECT_TRUE(VerifyLowered(p).ok()) << text;
  EXPECT_TRUE(testing::MatchesReference(spec, p).ok()) << text;
}

// A lowered program accumulating Acc[i] over k, with a (redundant) copy-out
// inside k: k is the innermost loop around every access, but the partial sums
// flow from one iteration of k to the next, so Acc may not be re-allocated
// inside k. With the loops swapped (i outside), Acc shrinks to one element
// inside i.
Program Accumulate(bool k_outside) {
  Program p;
  p.name = "accumulate";
  BufferPtr a = MakeBuffer("A", DType::Float32(), {4, 3});
  BufferPtr out = MakeBuffer("Out", DType::Float32(), {4});
  BufferPtr acc = MakeBuffer("Acc", DType::Float32(), {4}, BufferScope::kLocal);
  p.inputs = {a};
  p.outputs = {out};
  Expr i = Var("i"), k = Var("k"), i2 = Var("i2");
  std::vector<StmtPtr> update;
  update.push_back(MakeIf(k == 0, MakeStore(acc, {i}, Expr(0.0))));
  update.push_back(MakeStore(acc, {i}, Load(acc, {i}) + Load(a, {i, k})));
  p.root = std::make_unique<BlockNode>();
  p.root->name = "root";
  p.root->alloc_buffers = {acc};
  if (k_outside) {
    std::vector<StmtPtr> in_k;
    in_k.push_back(MakeFor(i, 4, MakeSeq(std::move(update))));
    in_k.push_back(MakeFor(i2, 4, MakeStore(out, {i2}, Load(acc, {i2}))));
    p.root->body = MakeFor(k, 3, MakeSeq(std::move(in_k)));
  } else {
    std::vector<StmtPtr> in_i;
    in_i.push_back(MakeFor(k, 3, MakeSeq(std::move(update))));
    in_i.push_back(MakeStore(out, {i}, Load(acc, {i})));
    p.root->body = MakeFor(i, 4, MakeSeq(std::move(in_i)));
  }
  return p;
}

TEST(CompactBuffers, AccumulatorIsNotReallocatedInsideItsReductionLoop) {
  Program p = Accumulate(/*k_outside=*/true);
  std::string before = PrintProgram(p);
  CompactStats stats;
  ASSERT_TRUE(CompactBuffers(&p, &stats).ok());
  EXPECT_EQ(PrintProgram(p), before);
  EXPECT_EQ(stats.kept, std::vector<std::string>{"Acc"});
}

TEST(CompactBuffers, AccumulatorShrinksToOneElementAboveItsReductionLoop) {
  Program p = Accumulate(/*k_outside=*/false);
  CompactStats stats;
  ASSERT_TRUE(CompactBuffers(&p, &stats).ok());
  std::string text = PrintProgram(p);
  EXPECT_TRUE(Contains(text,
                       "  for i in range(4):\n    block i_alloc():\n"
                       "      alloc Acc: float32[1] local\n"))
      << text;
  EXPECT_TRUE(Contains(text, "Acc[0] = Acc[0] + A[i, k]")) << text;
  EXPECT_TRUE(Contains(text, "Out[i] = Acc[0]")) << text;
}

TEST(CompactBuffers, BufferOfTwoNestsStaysAtRoot) {
  // softmax's stages run in separate nests: nothing to compact.
  const std::string spec = "softmax:M=3,N=7";
  Program p = testing::InitialProgramOf(spec);
  ASSERT_TRUE(LowerBlocks(&p).ok());
  std::string before = PrintProgram(p);
  CompactStats stats;
  ASSERT_TRUE(CompactBuffers(&p, &stats).ok());
  EXPECT_TRUE(stats.compacted.empty());
  EXPECT_EQ(PrintProgram(p), before);
}

TEST(CompactBuffers, ProducerComputedAtConsumerRowShrinksToARow) {
  const std::string spec = "softmax:M=4,N=8";
  ConcreteSchedule sch(testing::InitialProgramOf(spec));
  std::vector<BlockNode*> blocks = sch.program().Blocks();
  // The last stage's outer loop; every earlier stage computed at it.
  BlockRV last = sch.GetBlock(blocks.back()->name).value();
  LoopRV row = sch.GetLoops(last).value()[0];
  for (size_t b = blocks.size() - 1; b-- > 0;) {
    std::string name = sch.program().Blocks()[b]->name;
    absl::Status s = sch.ComputeAt(sch.GetBlock(name).value(), row);
    ASSERT_TRUE(s.ok()) << s << "\n" << PrintProgram(sch.program());
  }
  Program p = sch.program();
  ASSERT_TRUE(LowerBlocks(&p).ok());
  CompactStats stats;
  ASSERT_TRUE(CompactBuffers(&p, &stats).ok());
  std::string text = PrintProgram(p);
  EXPECT_FALSE(stats.compacted.empty()) << text;
  EXPECT_TRUE(stats.kept.empty()) << text;
  EXPECT_FALSE(Contains(text, "[4, 8]\n"))
      << text;  // no whole-matrix temporaries
  EXPECT_TRUE(testing::MatchesReference(spec, p).ok()) << text;
}

}  // namespace
}  // namespace lathe
