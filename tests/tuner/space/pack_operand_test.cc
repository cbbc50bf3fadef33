// Tests of PackOperands (tuner/space/pack_operand.h): which operands are
// packed and in which layout, the panel width, and where the copy goes.
#include "tuner/space/pack_operand.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/codegen/cpu_target.h"
#include "compiler/ir/printer.h"
#include "tests/tuner/space/space_test_util.h"
#include "tuner/space/block_nest.h"
#include "tuner/space/cache_write_output.h"
#include "tuner/space/multi_level_tiling.h"

namespace lathe::tuner {
namespace {

using testing::RuleFixture;

Target Znver4() {
  return ParseTarget("llvm -mcpu=znver4 -num-threads=2").value();
}

// The plan of the rule on `block` with this vector variable and (unless
// empty) this outer variable.
TilePlan PlanWith(const RuleFixture& f, const std::string& block,
                  const std::string& vector, const std::string& outer = "") {
  MultiLevelTiling rule;
  const BlockNode& b = *f.initial.FindBlock(block);
  for (const TilePlan& plan :
       rule.PlanTilings(f.initial, b, f.context.target)) {
    if (b.iter_vars[plan.vector_iter].var->name == vector &&
        (outer.empty() || b.iter_vars[plan.outer_iter].var->name == outer)) {
      return plan;
    }
  }
  ADD_FAILURE() << "no plan vectorizing " << vector << " with outer " << outer;
  return {};
}

// PackLayoutFor of the read of `buffer` by `block`.
std::optional<Layout> LayoutOf(const RuleFixture& f, const std::string& block,
                               const std::string& buffer,
                               const TilePlan& plan) {
  const BlockNode& b = *f.initial.FindBlock(block);
  for (const BufferAccess& read : AccessesOf(b).reads) {
    if (read.buffer->name == buffer) return PackLayoutFor(b, read, plan);
  }
  ADD_FAILURE() << block << " does not read " << buffer;
  return std::nullopt;
}

TEST(PackLayoutFor, MatmulPacksBIntoPanelsAndNotA) {
  RuleFixture f("matmul:M=64,N=1024,K=64", Znver4());
  TilePlan plan = PlanWith(f, "C", "vj");
  std::optional<Layout> b = LayoutOf(f, "C", "B", plan);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->splits, (std::vector<int64_t>{1, 32}));
  EXPECT_EQ(b->permutation, (std::vector<int64_t>{1, 0, 2}));  // [N/32][K][32]
  EXPECT_FALSE(LayoutOf(f, "C", "A", plan).has_value());       // broadcast
}

TEST(PackLayoutFor, OnePanelIsNotPacked) {
  RuleFixture f("matmul:M=64,N=32,K=64", Znver4());
  EXPECT_FALSE(LayoutOf(f, "C", "B", PlanWith(f, "C", "vj")).has_value());
}

TEST(PackLayoutFor, DenseWeightsBecomeUnitStride) {
  RuleFixture f("dense:M=64,N=64,K=32", Znver4());
  std::optional<Layout> w = LayoutOf(f, "Y", "W", PlanWith(f, "Y", "vj"));
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->splits, (std::vector<int64_t>{32, 1}));
  EXPECT_EQ(w->permutation, (std::vector<int64_t>{0, 2, 1}));  // [N/32][K][32]
}

TEST(PackLayoutFor, ConvWeightsPackedByOutputChannelBlocks) {
  RuleFixture f("conv2d_nchw:N=1,C=16,H=28,W=28,K=64,R=3,S=3,pad=1", Znver4());
  TilePlan by_k = PlanWith(f, "Y", "vk");
  std::optional<Layout> w = LayoutOf(f, "Y", "W", by_k);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->splits, (std::vector<int64_t>{32, 1, 1, 1}));
  EXPECT_EQ(w->permutation,
            (std::vector<int64_t>{0, 2, 3, 4, 1}));  // [K/32][C][R][S][32]
  EXPECT_FALSE(LayoutOf(f, "Y", "pad", by_k).has_value());  // not indexed by k
  // Vectorized over q, the input is read at q + s: no layout makes that a
  // panel, and the weights are a broadcast.
  TilePlan by_q = PlanWith(f, "Y", "vq");
  EXPECT_FALSE(LayoutOf(f, "Y", "pad", by_q).has_value());
  EXPECT_FALSE(LayoutOf(f, "Y", "W", by_q).has_value());
}

TEST(PanelWidth, PrefersTheVectorTileThenADivisor) {
  TilePlan plan;
  plan.lanes = 16;
  plan.vector_tile = 32;
  EXPECT_EQ(PanelWidth(1024, plan), 32);
  EXPECT_EQ(PanelWidth(48, plan), 24);  // divisor >= half a vector
  EXPECT_EQ(PanelWidth(28, plan), 28);  // shorter than the tile: whole
  EXPECT_EQ(PanelWidth(5, plan), 5);
  EXPECT_EQ(PanelWidth(37, plan), 32);  // prime: padded panels
  EXPECT_EQ(PanelWidth(2 * 37, plan), 32);
}

TEST(PackOperands, PanelAtTheOuterLoopWhenIndexedByIt) {
  for (const std::string outer : {"vi", "vj"}) {
    SCOPED_TRACE(outer);
    RuleFixture f("matmul:M=64,N=128,K=32", Znver4());
    TilePlan plan = PlanWith(f, "C", "vj", outer);
    std::unique_ptr<TracedSchedule> sch = f.Fresh();
    absl::StatusOr<TiledNest> nest = TileBlock(sch.get(), "C", plan);
    ASSERT_TRUE(nest.ok()) << nest.status();
    ASSERT_TRUE(CacheWriteOutput(sch.get(), *nest).ok());
    absl::Status packed = PackOperands(sch.get(), *nest);
    ASSERT_TRUE(packed.ok()) << packed;
    const Program& p = sch->program();
    const BlockNode* pack = p.FindBlock("B_global");
    ASSERT_NE(pack, nullptr) << PrintProgram(p);
    std::vector<ForNode*> loops = p.LoopsAbove(pack);
    const std::string parallel = sch->LoopName(nest->parallel_loop).value();
    if (outer == "vj") {
      // Under j's outer loop: the loop, then one loop per dimension of B.
      ASSERT_EQ(loops.size(), 3u) << PrintProgram(p);
      EXPECT_EQ(loops[0]->var->name, parallel);
    } else {
      ASSERT_EQ(loops.size(), 2u)
          << PrintProgram(p);  // the root: all of B, once
    }
    EXPECT_EQ(loops.back()->for_kind, ForKind::kVectorized);
    EXPECT_TRUE(IsPlaced(*pack));
    // The packed buffer is [N/32][K][32].
    const BufferPtr cache = AccessesOf(*pack).writes.front().buffer;
    EXPECT_EQ(cache->shape, (std::vector<int64_t>{4, 32, 32}));
    ASSERT_TRUE(sch->Parallel(nest->parallel_loop).ok());
    absl::Status checked = testing::CheckProgram(f.workload, p, HostTarget(2));
    EXPECT_TRUE(checked.ok()) << checked;
  }
}

// A layout-free (const) operand is packed whole at the root even when the
// outer loop indexes it, and its copy is marked as the layout-free
// pre-pack; the same computation with run-time weights packs per outer
// iteration, unmarked.
TEST(PackOperands, LayoutFreeOperandPackedOnceAtTheRootAndMarked) {
  for (const bool constant : {true, false}) {
    SCOPED_TRACE(constant ? "const" : "run time");
    RuleFixture f(absl::StrCat("custom:input A[64,32]; input B[32,128]",
                               constant ? " const" : "",
                               "; C[i,j] += A[i,k] * B[k,j]|i=64,j=128,k=32"),
                  Znver4());
    TilePlan plan = PlanWith(f, "C", "vj", "vj");
    std::unique_ptr<TracedSchedule> sch = f.Fresh();
    absl::StatusOr<TiledNest> nest = TileBlock(sch.get(), "C", plan);
    ASSERT_TRUE(nest.ok()) << nest.status();
    ASSERT_TRUE(CacheWriteOutput(sch.get(), *nest).ok());
    absl::Status packed = PackOperands(sch.get(), *nest);
    ASSERT_TRUE(packed.ok()) << packed;
    const Program& p = sch->program();
    const BlockNode* pack = p.FindBlock("B_global");
    ASSERT_NE(pack, nullptr) << PrintProgram(p);
    EXPECT_EQ(pack->annotations.count(kLayoutFreePackAnnotation),
              constant ? 1u : 0u);
    std::vector<ForNode*> loops = p.LoopsAbove(pack);
    // The root: one loop per dimension of B; else under j's outer loop too.
    EXPECT_EQ(loops.size(), constant ? 2u : 3u) << PrintProgram(p);
    ASSERT_TRUE(sch->Parallel(nest->parallel_loop).ok());
    absl::Status checked = testing::CheckProgram(f.workload, p, HostTarget(2));
    EXPECT_TRUE(checked.ok()) << checked;
  }
}

// The steps of MultiLevelTiling up to packing (tile, cache the output,
// pack the operands) on `block` with `plan`.
absl::StatusOr<TiledNest> TileAndPack(TracedSchedule* sch,
                                      const std::string& block,
                                      const TilePlan& plan) {
  absl::StatusOr<TiledNest> nest = TileBlock(sch, block, plan);
  if (!nest.ok()) return nest.status();
  if (absl::StatusOr<OutputCache> cached = CacheWriteOutput(sch, *nest);
      !cached.ok()) {
    return cached.status();
  }
  if (absl::Status packed = PackOperands(sch, *nest); !packed.ok())
    return packed;
  return nest;
}

TEST(PackOperands, ConvWeightsStoredInPanelOrderAtTheRoot) {
  RuleFixture f("conv2d_nchw:N=1,C=4,H=14,W=14,K=64,R=3,S=3,pad=1", Znver4());
  TilePlan plan = PlanWith(f, "Y", "vk", "vp");
  std::unique_ptr<TracedSchedule> sch = f.Fresh();
  absl::StatusOr<TiledNest> nest = TileAndPack(sch.get(), "Y", plan);
  ASSERT_TRUE(nest.ok()) << nest.status();
  const Program& p = sch->program();
  const BlockNode* pack = p.FindBlock("W_global");
  ASSERT_NE(pack, nullptr) << PrintProgram(p);
  std::vector<ForNode*> loops = p.LoopsAbove(pack);
  // k's panels (parallel), c, r, s, then k within its panel, whose stores
  // into [K/32][C][R][S][32] are consecutive.
  ASSERT_EQ(loops.size(), 5u) << PrintProgram(p);
  EXPECT_EQ(loops[0]->extent, 2);
  EXPECT_EQ(loops[0]->for_kind, ForKind::kParallel);
  EXPECT_EQ(loops[1]->extent, 4);
  EXPECT_EQ(loops[4]->extent, 32);
  EXPECT_EQ(loops[4]->for_kind, ForKind::kVectorized);
  const BufferPtr cache = AccessesOf(*pack).writes.front().buffer;
  EXPECT_EQ(cache->shape, (std::vector<int64_t>{2, 4, 3, 3, 32}));
  absl::Status checked = testing::CheckProgram(f.workload, p, HostTarget(2));
  EXPECT_TRUE(checked.ok()) << checked;
}

// Under the parallel loop of k (the copy of one outer tile's panels), the
// panel loop is innermost as at the root, and nothing more is parallel.
TEST(PackOperands, ConvWeightsStoredInPanelOrderAtTheOuterLoop) {
  RuleFixture f("conv2d_nchw:N=1,C=4,H=14,W=14,K=64,R=3,S=3,pad=1", Znver4());
  TilePlan plan = PlanWith(f, "Y", "vk", "vk");
  std::unique_ptr<TracedSchedule> sch = f.Fresh();
  absl::StatusOr<TiledNest> nest = TileAndPack(sch.get(), "Y", plan);
  ASSERT_TRUE(nest.ok()) << nest.status();
  const Program& p = sch->program();
  const BlockNode* pack = p.FindBlock("W_global");
  ASSERT_NE(pack, nullptr) << PrintProgram(p);
  std::vector<ForNode*> loops = p.LoopsAbove(pack);
  // The loops down to k's outer one, then k's panels, c, r, s and k within
  // its panel.
  ASSERT_GE(loops.size(), 6u) << PrintProgram(p);
  const std::string parallel = sch->LoopName(nest->parallel_loop).value();
  EXPECT_EQ(loops[loops.size() - 6]->var->name, parallel) << PrintProgram(p);
  EXPECT_EQ(loops.back()->extent, 32);
  EXPECT_EQ(loops.back()->for_kind, ForKind::kVectorized);
  for (size_t i = loops.size() - 5; i + 1 < loops.size(); ++i) {
    EXPECT_EQ(loops[i]->for_kind, ForKind::kSerial) << loops[i]->var->name;
  }
  ASSERT_TRUE(sch->Parallel(nest->parallel_loop).ok());
  absl::Status checked = testing::CheckProgram(f.workload, p, HostTarget(2));
  EXPECT_TRUE(checked.ok()) << checked;
}

}  // namespace
}  // namespace lathe::tuner
