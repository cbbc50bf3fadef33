// Tests of MultiLevelTiling (tuner/space/multi_level_tiling.h): which blocks
// it takes and which branches it makes, the structure of a tiled nest, and
// the hand-written schedules of bench/traces as points of its spaces (the
// lowered programs structurally equal).
#include "tuner/space/multi_level_tiling.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "compiler/codegen/cpu_target.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/replay.h"
#include "tests/tuner/space/space_test_util.h"
#include "tuner/space/block_nest.h"

namespace lathe::tuner {
namespace {

using testing::CountInstructions;
using testing::LoopsOfKind;
using testing::RuleFixture;

// AVX-512 with 32 registers, whatever machine runs the test.
Target Znver4() {
  return ParseTarget("llvm -mcpu=znver4 -num-threads=2").value();
}
Target Haswell() {
  return ParseTarget("llvm -mcpu=haswell -num-threads=2").value();
}

int Iter(const Program& program, const std::string& block,
         const std::string& var) {
  const BlockNode* b = program.FindBlock(block);
  for (size_t i = 0; i < b->iter_vars.size(); ++i) {
    if (b->iter_vars[i].var->name == var) return static_cast<int>(i);
  }
  ADD_FAILURE() << "no iteration variable " << var << " in " << block;
  return -1;
}

struct Applied {
  std::vector<TilePlan> plans;
  std::vector<std::unique_ptr<TracedSchedule>> branches;
};

Applied ApplyTo(const RuleFixture& f, const std::string& block,
                const MultiLevelTiling::Options& options = {}) {
  MultiLevelTiling rule(options);
  Applied a;
  a.plans = rule.PlanTilings(f.initial, *f.initial.FindBlock(block),
                             f.context.target);
  absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>> branches =
      rule.Apply(f.Fresh(), block, f.context);
  EXPECT_TRUE(branches.ok()) << branches.status();
  if (branches.ok()) a.branches = std::move(*branches);
  return a;
}

// The index of the plan with this outer variable (and vector variable).
int PlanIndex(const std::vector<TilePlan>& plans, int outer, int vector) {
  for (size_t i = 0; i < plans.size(); ++i) {
    if (plans[i].outer_iter == outer && plans[i].vector_iter == vector)
      return static_cast<int>(i);
  }
  ADD_FAILURE() << "no plan with outer " << outer << " and vector " << vector;
  return 0;
}

// Indices of the sampling instructions (sample_perfect_tile and
// sample_categorical), in trace order.
std::vector<int64_t> Samples(const Trace& trace) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < trace.instructions.size(); ++i) {
    const std::string& kind = trace.instructions[i].kind;
    if (kind == "sample_perfect_tile" || kind == "sample_categorical")
      out.push_back(i);
  }
  return out;
}

// The decision of sample_categorical instruction `index` that picks `value`.
std::vector<int64_t> Pick(const Trace& trace, int64_t index, int64_t value) {
  std::vector<int64_t> candidates =
      trace.instructions[index].IntsAttr("candidates").value();
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i] == value) return {static_cast<int64_t>(i)};
  }
  ADD_FAILURE() << "no candidate " << value << " at instruction " << index;
  return {0};
}

TEST(MultiLevelTiling, PlansMatmulOneBranchPerOuterVariable) {
  RuleFixture f("matmul:M=64,N=64,K=64", Znver4());
  Applied a = ApplyTo(f, "C");
  const int i = Iter(f.initial, "C", "vi"), j = Iter(f.initial, "C", "vj");
  ASSERT_EQ(a.plans.size(), 2u);
  ASSERT_EQ(a.branches.size(), 2u);
  for (const TilePlan& p : a.plans) {
    EXPECT_EQ(p.vector_iter, j);
    EXPECT_EQ(p.row_iter, i);
    EXPECT_FALSE(p.transposed_output);
    EXPECT_EQ(p.lanes, 16);
    EXPECT_EQ(p.vector_tile, 32);  // two zmm per row
    EXPECT_EQ(p.row_tile, 14);     // 28 accumulators / 2
  }
  EXPECT_EQ(a.plans[0].outer_iter, i);
  EXPECT_EQ(a.plans[1].outer_iter, j);
}

TEST(MultiLevelTiling, RegisterTileFollowsTheTarget) {
  RuleFixture f("matmul:M=64,N=64,K=64", Haswell());
  Applied a = ApplyTo(f, "C");
  ASSERT_FALSE(a.plans.empty());
  EXPECT_EQ(a.plans[0].lanes, 8);
  EXPECT_EQ(a.plans[0].vector_tile, 16);
  EXPECT_EQ(a.plans[0].row_tile, 6);  // 12 accumulators of 16 ymm / 2
}

TEST(MultiLevelTiling, ConvBranchesOnTheVectorVariableWhenQFillsNoVector) {
  RuleFixture f("conv2d_nchw:N=1,C=16,H=28,W=28,K=32,R=3,S=3,pad=1", Znver4());
  Applied a = ApplyTo(f, "Y");
  const Program& p = f.initial;
  const int k = Iter(p, "Y", "vk"), q = Iter(p, "Y", "vq"),
            pp = Iter(p, "Y", "vp");
  // Vector q (contiguous) or k (transposed), times outer k, p, q (n = 1 is
  // not an outer choice).
  ASSERT_EQ(a.plans.size(), 6u);
  EXPECT_EQ(a.branches.size(), 6u);
  int transposed = 0;
  for (const TilePlan& plan : a.plans) {
    EXPECT_NE(plan.outer_iter, Iter(p, "Y", "vn_1"));
    if (plan.transposed_output) {
      ++transposed;
      EXPECT_EQ(plan.vector_iter, k);
      EXPECT_EQ(plan.row_iter, q);
    } else {
      EXPECT_EQ(plan.vector_iter, q);
      EXPECT_EQ(plan.row_iter, pp);
    }
  }
  EXPECT_EQ(transposed, 3);

  // Q = 32 fills whole vectors: no transposed branch.
  RuleFixture g("conv2d_nchw:N=1,C=16,H=32,W=32,K=32,R=3,S=3,pad=1", Znver4());
  Applied b = ApplyTo(g, "Y");
  EXPECT_EQ(b.plans.size(), 3u);
  for (const TilePlan& plan : b.plans) EXPECT_FALSE(plan.transposed_output);

  // At stride 2, Q = 32 still fills whole vectors, but the input is read
  // at every other column: the transposed branch is offered too.
  RuleFixture h("conv2d_nchw:N=1,C=16,H=64,W=64,K=32,R=3,S=3,stride=2,pad=1",
                Znver4());
  Applied c = ApplyTo(h, "Y");
  int strided_transposed = 0;
  for (const TilePlan& plan : c.plans) {
    if (plan.transposed_output) {
      ++strided_transposed;
      EXPECT_EQ(plan.vector_iter, Iter(h.initial, "Y", "vk"));
    }
  }
  EXPECT_EQ(strided_transposed, 3);
  EXPECT_EQ(c.plans.size(), 6u);
}

TEST(MultiLevelTiling, LeavesBlocksWithoutReuseAlone) {
  // Pooling, softmax's reductions, element-wise blocks, plain reductions.
  for (const auto& [spec, block] :
       std::vector<std::pair<std::string, std::string>>{
           {"max_pool2d:N=1,C=4,H=16,W=16,R=2,S=2,stride=2", "Y"},
           {"softmax:M=8,N=64", ""},
           {"add:M=16,N=64", "C"},
           {"matmul:M=1,N=1,K=64", "C"}}) {
    SCOPED_TRACE(spec);
    RuleFixture f(spec, Znver4());
    for (const BlockNode* b : f.initial.Blocks()) {
      if (!block.empty() && b->name != block) continue;
      Applied a = ApplyTo(f, b->name);
      EXPECT_TRUE(a.plans.empty()) << b->name;
      ASSERT_EQ(a.branches.size(), 1u);
      EXPECT_TRUE(a.branches[0]->trace().instructions.empty()) << b->name;
    }
  }
}

TEST(MultiLevelTiling, LeavesATiledBlockAlone) {
  RuleFixture f("matmul:M=64,N=64,K=64", Znver4());
  Applied a = ApplyTo(f, "C");
  ASSERT_EQ(a.branches.size(), 2u);
  const Program& tiled = a.branches[0]->program();
  EXPECT_TRUE(IsTiled(*tiled.FindBlock("C")));
  MultiLevelTiling rule;
  EXPECT_TRUE(
      rule.PlanTilings(tiled, *tiled.FindBlock("C"), f.context.target).empty());
  absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>> again =
      rule.Apply(std::move(a.branches[0]), "C", f.context);
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_EQ(again->size(), 1u);
}

TEST(MultiLevelTiling, MatmulNestHasTheSSRSRSStructure) {
  RuleFixture f("matmul:M=64,N=64,K=64", Znver4());
  Applied a = ApplyTo(f, "C");
  ASSERT_EQ(a.branches.size(), 2u);
  const TracedSchedule& sch = *a.branches[1];  // outer j
  const Trace& trace = sch.trace();
  // The register tile of i: 4 or 8 rows (divisors of 64 in [4, 14]), then
  // 3 levels; j split by the panel width (32), 3 levels across panels, a
  // register tile of 16 or 32 within one; k in 2 levels.
  std::vector<int64_t> samples = Samples(trace);
  ASSERT_EQ(samples.size(), 5u);
  const std::vector<Instruction>& inst = trace.instructions;
  EXPECT_EQ(inst[samples[0]].kind, "sample_categorical");
  EXPECT_EQ(inst[samples[0]].IntsAttr("candidates").value(),
            (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(inst[samples[1]].IntAttr("n").value(), 3);
  EXPECT_EQ(inst[samples[2]].kind, "sample_categorical");
  EXPECT_EQ(inst[samples[2]].IntsAttr("candidates").value(),
            (std::vector<int64_t>{16, 32}));
  EXPECT_EQ(inst[samples[3]].IntAttr("n").value(), 3);
  EXPECT_EQ(inst[samples[4]].IntAttr("n").value(), 2);
  EXPECT_EQ(a.plans[1].panel, 32);
  EXPECT_EQ(CountInstructions(trace, "cache_write"), 1);
  EXPECT_EQ(CountInstructions(trace, "reverse_compute_at"), 1);
  EXPECT_EQ(CountInstructions(trace, "decompose_reduction"), 1);
  EXPECT_EQ(CountInstructions(trace, "cache_read"), 1);  // B, not A
  EXPECT_EQ(CountInstructions(trace, "compute_at"),
            1);  // B's panel at j's outer loop

  // The loops above the update, i split by its register tile first (i_0
  // above it, i_1 the rows), j by the panel width (j_0 across panels, j_1
  // within one): j0 i0 | i1 j1 | k0 | i2 j2 j2' | k1 | i3 j3.
  const Program& p = sch.program();
  std::vector<std::string> names;
  for (const ForNode* l : p.LoopsAbove(p.FindBlock("C")))
    names.push_back(l->var->name);
  EXPECT_EQ(names, (std::vector<std::string>{"j_0_0", "i_0_0", "i_0_1", "j_0_1",
                                             "k_0", "i_0_2", "j_0_2", "j_1_0",
                                             "k_1", "i_1", "j_1_1"}))
      << PrintProgram(p);
  std::vector<const ForNode*> parallel = LoopsOfKind(p, ForKind::kParallel);
  ASSERT_EQ(parallel.size(), 1u);
  EXPECT_EQ(parallel[0]->var->name, "j_0_0");
  EXPECT_EQ(p.FindLoop("i_1")->for_kind, ForKind::kUnrolled);
  EXPECT_EQ(p.FindLoop("j_1_1")->for_kind, ForKind::kVectorized);
  // The packed panels of B are copied under j's outer loop, before the i
  // blocks.
  const BlockNode* pack = p.FindBlock("B_global");
  ASSERT_NE(pack, nullptr) << PrintProgram(p);
  EXPECT_EQ(p.LoopsAbove(pack)[0]->var->name, "j_0_0");
  // The write-back sits under the last loop of the middle level.
  const BlockNode* back = p.FindBlock("C_local");
  ASSERT_NE(back, nullptr) << PrintProgram(p);
  std::vector<ForNode*> back_loops = p.LoopsAbove(back);
  ASSERT_EQ(back_loops.size(), 6u);
  EXPECT_EQ(back_loops[3]->var->name, "j_0_1");
  EXPECT_EQ(back_loops[5]->for_kind, ForKind::kVectorized);

  // Outer i: B is packed once, at the root.
  const Program& q = a.branches[0]->program();
  ASSERT_NE(q.FindBlock("B_global"), nullptr);
  EXPECT_EQ(LoopsOfKind(q, ForKind::kParallel)[0]->var->name, "i_0_0");
  EXPECT_EQ(q.LoopsAbove(q.FindBlock("B_global")).size(), 2u);
}

TEST(MultiLevelTiling, SpacesAreDeterministicAndRoundTrip) {
  RuleFixture f("conv2d_nchw:N=1,C=8,H=14,W=14,K=32,R=3,S=3,pad=1", Znver4());
  Applied a = ApplyTo(f, "Y");
  Applied b = ApplyTo(f, "Y");
  ASSERT_EQ(a.branches.size(), b.branches.size());
  for (size_t i = 0; i < a.branches.size(); ++i) {
    const Trace& t = a.branches[i]->trace();
    EXPECT_EQ(t.ToText(), b.branches[i]->trace().ToText());
    absl::StatusOr<Trace> parsed = Trace::FromJson(t.ToJson());
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    absl::StatusOr<std::unique_ptr<TracedSchedule>> replayed =
        ReplayTrace(*parsed, f.initial);
    ASSERT_TRUE(replayed.ok()) << replayed.status();
    EXPECT_TRUE(
        StructuralEqual((*replayed)->program(), a.branches[i]->program()));
    EXPECT_EQ((*replayed)->trace().ToText(), t.ToText());
  }
}

TEST(MultiLevelTiling, DenseFoldsBiasAndReluIntoTheWriteBack) {
  RuleFixture f("dense:M=64,N=48,K=32,bias=1,relu=1", Znver4());
  Applied a = ApplyTo(f, "dense");
  ASSERT_EQ(a.branches.size(), 2u);
  for (const auto& branch : a.branches) {
    const Program& p = branch->program();
    EXPECT_EQ(p.FindBlock("bias_add"), nullptr) << PrintProgram(p);
    EXPECT_EQ(p.FindBlock("Y"), nullptr) << PrintProgram(p);
    // W[N, K] is packed as [N/panel][K][panel]: vectors of W unit-stride.
    EXPECT_NE(p.FindBlock("W_global"), nullptr) << PrintProgram(p);
  }
}

// Lowers both and expects equal programs.
void ExpectSameLowered(const Program& space_point, const Program& hand) {
  absl::StatusOr<Program> a = LowerProgram(space_point);
  absl::StatusOr<Program> b = LowerProgram(hand);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_TRUE(StructuralEqual(*a, *b)) << "space point:\n"
                                       << PrintProgram(*a) << "hand-written:\n"
                                       << PrintProgram(*b);
  EXPECT_EQ(StructuralHashHex(*a), StructuralHashHex(*b));
}

std::unique_ptr<TracedSchedule> ReplayHand(const std::string& file,
                                           const Program& initial) {
  absl::StatusOr<Trace> hand =
      Trace::Load(std::string(LATHE_SOURCE_DIR) + "/bench/traces/" + file);
  EXPECT_TRUE(hand.ok()) << hand.status();
  absl::StatusOr<std::unique_ptr<TracedSchedule>> sch =
      ReplayTrace(*hand, initial);
  EXPECT_TRUE(sch.ok()) << sch.status();
  return std::move(*sch);
}

// bench/traces/matmul_1024.json: j_o (parallel) > B panel > i_o > k > i_i (8,
// unrolled) > j_i (32, vectorized), accumulator written back under i_o. In
// the space: outer j; i: 8 rows, [128, 1, 1] (the i blocks in the outer
// level, after j); j: split by the panel width 32, a register tile of 32,
// [32, 1, 1] across panels; k = [1024, 1]; the unit loops vanish in
// lowering.
TEST(MultiLevelTiling, HandWrittenMatmulIsAPointOfTheSpace) {
  RuleFixture f("matmul:M=1024,N=1024,K=1024", Znver4());
  Applied a = ApplyTo(f, "C");
  ASSERT_EQ(a.branches.size(), a.plans.size());
  const int j = Iter(f.initial, "C", "vj");
  const Trace& space = a.branches[PlanIndex(a.plans, j, j)]->trace();
  // i: rows, then 3 levels; j: 3 levels across panels of 32, the register
  // tile within one; k.
  std::vector<int64_t> samples = Samples(space);
  ASSERT_EQ(samples.size(), 5u);
  Decisions decisions = {{samples[0], Pick(space, samples[0], 8)},
                         {samples[1], {128, 1, 1}},
                         {samples[2], Pick(space, samples[2], 32)},
                         {samples[3], {32, 1, 1}},
                         {samples[4], {1024, 1}}};
  absl::StatusOr<std::unique_ptr<TracedSchedule>> point =
      ReplayTrace(space, f.initial, decisions);
  ASSERT_TRUE(point.ok()) << point.status();
  std::unique_ptr<TracedSchedule> hand =
      ReplayHand("matmul_1024.json", f.initial);
  ASSERT_NE(hand, nullptr);
  ExpectSameLowered((*point)->program(), hand->program());
}

// bench/traces/conv2d_128x28.json: p (parallel) > k_o > q_o > [init] > c > r >
// s > q_i (7, unrolled) > k_i (32, vectorized), accumulator laid out
// [n][p][q][k], weights packed [K/32][C][R][S][32] at the root, the padding
// stage's channel loop parallel. In the space: vector k (transposed), outer
// p; k: a register tile of 32 (a whole panel), [1, 4, 1] across panels;
// p = [28, 1, 1]; q: 7 rows, [1, 4, 1]; c = [128, 1].
// The padding stage is not this rule's (ParallelVectorizeUnroll's): its one
// instruction is applied here as the hand trace does.
TEST(MultiLevelTiling, HandWrittenConvIsAPointOfTheSpace) {
  RuleFixture f("conv2d_nchw:N=1,C=128,H=28,W=28,K=128,R=3,S=3,pad=1",
                Znver4());
  Applied a = ApplyTo(f, "Y");
  ASSERT_EQ(a.branches.size(), a.plans.size());
  const int k = Iter(f.initial, "Y", "vk"), p = Iter(f.initial, "Y", "vp");
  const Trace& space = a.branches[PlanIndex(a.plans, p, k)]->trace();
  // k: the register tile within a panel of 32, then 3 levels across panels;
  // p; q: rows, then 3 levels; c (n = 1 is not split).
  std::vector<int64_t> samples = Samples(space);
  ASSERT_EQ(samples.size(), 6u);
  Decisions decisions = {{samples[0], Pick(space, samples[0], 32)},
                         {samples[1], {1, 4, 1}},
                         {samples[2], {28, 1, 1}},
                         {samples[3], Pick(space, samples[3], 7)},
                         {samples[4], {1, 4, 1}},
                         {samples[5], {128, 1}}};
  absl::StatusOr<std::unique_ptr<TracedSchedule>> point =
      ReplayTrace(space, f.initial, decisions);
  ASSERT_TRUE(point.ok()) << point.status();
  TracedSchedule& sch = **point;
  std::vector<LoopRV> pad_loops =
      sch.GetLoops(sch.GetBlock("pad").value()).value();
  ASSERT_TRUE(sch.Parallel(pad_loops[1]).ok());
  std::unique_ptr<TracedSchedule> hand =
      ReplayHand("conv2d_128x28.json", f.initial);
  ASSERT_NE(hand, nullptr);
  ExpectSameLowered(sch.program(), hand->program());
}

}  // namespace
}  // namespace lathe::tuner
