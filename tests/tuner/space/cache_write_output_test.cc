// Tests of CacheWriteOutput (tuner/space/cache_write_output.h): the output
// cache's layout, and the accumulator of a tiled nest ending up one tile in
// registers-sized local storage, initialized outside the reduction and
// written back once.
#include "tuner/space/cache_write_output.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/codegen/cpu_target.h"
#include "compiler/ir/printer.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/replay.h"
#include "tests/tuner/space/space_test_util.h"
#include "tuner/space/multi_level_tiling.h"

namespace lathe::tuner {
namespace {

using testing::RuleFixture;

Target Znver4() {
  return ParseTarget("llvm -mcpu=znver4 -num-threads=2").value();
}

TEST(OutputCacheLayout, EmptyWhenTheVectorDimensionIsLast) {
  RuleFixture f("matmul:M=64,N=64,K=64", Znver4());
  MultiLevelTiling rule;
  const BlockNode& c = *f.initial.FindBlock("C");
  std::vector<TilePlan> plans =
      rule.PlanTilings(f.initial, c, f.context.target);
  ASSERT_FALSE(plans.empty());
  EXPECT_TRUE(OutputCacheLayout(c, plans[0]).empty());
}

TEST(OutputCacheLayout, MovesTheVectorDimensionLast) {
  RuleFixture f("conv2d_nchw:N=1,C=16,H=28,W=28,K=32,R=3,S=3,pad=1", Znver4());
  MultiLevelTiling rule;
  const BlockNode& y = *f.initial.FindBlock("Y");
  int transposed = 0;
  for (const TilePlan& plan :
       rule.PlanTilings(f.initial, y, f.context.target)) {
    if (!plan.transposed_output) continue;
    ++transposed;
    Layout layout = OutputCacheLayout(y, plan);
    EXPECT_EQ(layout.splits, (std::vector<int64_t>{1, 1, 1, 1}));
    EXPECT_EQ(layout.permutation,
              (std::vector<int64_t>{0, 2, 3, 1}));  // [N,P,Q,K]
  }
  EXPECT_GT(transposed, 0);
}

// Tiles C of a matmul with fixed decisions and applies the step alone.
struct TiledMatmul {
  explicit TiledMatmul(const std::string& spec) : f(spec, Znver4()) {
    MultiLevelTiling rule;
    plan = rule.PlanTilings(f.initial, *f.initial.FindBlock("C"),
                            f.context.target)[1];
    sch = f.Fresh();
    absl::StatusOr<TiledNest> tiled = TileBlock(sch.get(), "C", plan);
    EXPECT_TRUE(tiled.ok()) << tiled.status();
    nest = *tiled;
  }
  RuleFixture f;
  TilePlan plan;
  std::unique_ptr<TracedSchedule> sch;
  TiledNest nest;
};

TEST(CacheWriteOutput, AccumulatesOneTileWrittenBackOnce) {
  TiledMatmul t("matmul:M=64,N=64,K=64");
  absl::StatusOr<OutputCache> cache = CacheWriteOutput(t.sch.get(), t.nest);
  ASSERT_TRUE(cache.ok()) << cache.status();
  const Program& p = t.sch->program();
  const std::string middle_last = t.sch->LoopName(t.nest.middle.back()).value();
  const std::string reduce_first =
      t.sch->LoopName(t.nest.reduce_outer.front()).value();

  // The write-back under the last middle loop, one loop per dimension
  // (unit loops kept), the vector dimension vectorized, the rows unrolled.
  const BlockNode* back =
      p.FindBlock(t.sch->BlockName(cache->write_back).value());
  std::vector<ForNode*> back_loops = p.LoopsAbove(back);
  ASSERT_EQ(back_loops.size(), t.nest.outer.size() + t.nest.middle.size() + 2);
  EXPECT_EQ(back_loops[back_loops.size() - 3]->var->name, middle_last);
  EXPECT_EQ(back_loops.back()->for_kind, ForKind::kVectorized);
  EXPECT_EQ(back_loops[back_loops.size() - 2]->for_kind, ForKind::kUnrolled);

  // The init before the first reduction loop, vectorized the same way.
  const BlockNode* init = p.FindBlock(t.sch->BlockName(cache->init).value());
  std::vector<ForNode*> init_loops = p.LoopsAbove(init);
  for (const ForNode* l : init_loops) EXPECT_NE(l->var->name, reduce_first);
  EXPECT_EQ(init_loops.back()->for_kind, ForKind::kVectorized);
  EXPECT_EQ(init_loops[init_loops.size() - 2]->for_kind, ForKind::kUnrolled);

  // Lowered, the accumulator is one inner x register tile.
  auto extent = [&](const std::vector<LoopRV>& level, size_t i) {
    return p.FindLoop(t.sch->LoopName(level[i]).value())->extent;
  };
  const int64_t rows = extent(t.nest.inner, 0) * extent(t.nest.registers, 0);
  // j's inner level: across panels, then within one.
  ASSERT_EQ(t.nest.inner.size(), 3u);
  const int64_t cols = extent(t.nest.inner, 1) * extent(t.nest.inner, 2) *
                       extent(t.nest.registers, 1);
  LowerReport report;
  absl::StatusOr<Program> lowered = LowerProgram(p, {}, &report);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_TRUE(report.compact.large_local.empty());
  bool found = false;
  VisitStmts(static_cast<const StmtNode*>(lowered->root.get()),
             [&](const StmtNode* s) {
               if (const auto* b = s->as<BlockNode>()) {
                 for (const BufferPtr& buf : b->alloc_buffers) {
                   if (buf->name != "C_local") continue;
                   found = true;
                   EXPECT_EQ(buf->shape, (std::vector<int64_t>{rows, cols}))
                       << PrintProgram(*lowered);
                 }
               }
               return true;
             });
  EXPECT_TRUE(found) << PrintProgram(*lowered);
  absl::Status checked = testing::CheckProgram(t.f.workload, p, HostTarget(1));
  EXPECT_TRUE(checked.ok()) << checked;
}

TEST(CacheWriteOutput, TransposedAccumulatorIsUnrolledOnWriteBack) {
  RuleFixture f("conv2d_nchw:N=1,C=4,H=14,W=14,K=32,R=3,S=3,pad=1", Znver4());
  MultiLevelTiling rule;
  TilePlan plan;
  for (const TilePlan& p : rule.PlanTilings(
           f.initial, *f.initial.FindBlock("Y"), f.context.target)) {
    if (p.transposed_output) plan = p;
  }
  ASSERT_TRUE(plan.transposed_output);
  std::unique_ptr<TracedSchedule> sch = f.Fresh();
  absl::StatusOr<TiledNest> nest = TileBlock(sch.get(), "Y", plan);
  ASSERT_TRUE(nest.ok()) << nest.status();
  absl::StatusOr<OutputCache> cache = CacheWriteOutput(sch.get(), *nest);
  ASSERT_TRUE(cache.ok()) << cache.status();
  const Program& p = sch->program();
  // The cache is Y[N,K,P,Q] laid out [N,P,Q,K].
  const BlockNode* y = p.FindBlock("Y");
  const BufferPtr local = AccessesOf(*y).writes.front().buffer;
  EXPECT_EQ(local->shape, (std::vector<int64_t>{1, 14, 14, 32}));
  // Write-back loops n, p, k, q (reordered): k and q unrolled innermost,
  // none vectorized.
  std::vector<ForNode*> back =
      p.LoopsAbove(p.FindBlock(sch->BlockName(cache->write_back).value()));
  ASSERT_GE(back.size(), 4u);
  EXPECT_EQ(back[back.size() - 2]->for_kind, ForKind::kUnrolled);  // k
  EXPECT_EQ(back[back.size() - 1]->for_kind, ForKind::kUnrolled);  // q
  EXPECT_EQ(back[back.size() - 3]->for_kind, ForKind::kSerial);    // p
  for (const ForNode* l : back) EXPECT_NE(l->for_kind, ForKind::kVectorized);
  absl::Status checked = testing::CheckProgram(f.workload, p, HostTarget(1));
  EXPECT_TRUE(checked.ok()) << checked;
}

}  // namespace
}  // namespace lathe::tuner
