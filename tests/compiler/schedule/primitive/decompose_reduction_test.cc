#include "compiler/schedule/primitive/decompose_reduction.h"

#include <gtest/gtest.h>

#include <map>

#include "compiler/ir/printer.h"
#include "compiler/schedule/traced_schedule.h"
#include "tests/compiler/schedule/same_result.h"
#include "tests/compiler/schedule/test_programs.h"
#include "tests/compiler/schedule/trace_round_trip.h"

namespace lathe {
namespace {

// The loop names from the root down to `block`, outermost first.
std::vector<std::string> LoopNames(const Program& p, const std::string& block) {
  std::vector<std::string> names;
  for (ForNode* l : p.LoopsAbove(p.FindBlock(block)))
    names.push_back(l->var->name);
  return names;
}

std::vector<std::string> BlockOrder(const Program& p) {
  std::vector<std::string> names;
  for (BlockNode* b : p.Blocks()) names.push_back(b->name);
  return names;
}

// Rebuilds the perfect nest of block C of a matmul with its loops in `order`.
void ReorderMatmulNest(Program* p, const std::vector<std::string>& order) {
  std::map<std::string, Expr> vars;
  for (const char* name : {"i", "j", "k"}) vars[name] = p->FindLoop(name)->var;
  std::map<std::string, int64_t> extents;
  for (const char* name : {"i", "j", "k"})
    extents[name] = p->FindLoop(name)->extent;
  StmtPtr block = CloneStmt(*p->FindBlock("C"));
  for (size_t i = order.size(); i-- > 0;) {
    block = MakeFor(vars[order[i]], extents[order[i]], std::move(block));
  }
  p->root->body = std::move(block);
}

TEST(DecomposeReduction, AtTheReductionLoop) {
  Program initial = testing::MatmulProgram(5, 6, 7);
  TracedSchedule sch(initial);
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  auto init = sch.DecomposeReduction(c, loops[2]);
  ASSERT_TRUE(init.ok()) << init.status();
  const Program& p = sch.program();
  EXPECT_EQ(sch.BlockName(*init).value(), "C_init");
  const BlockNode* init_block = p.FindBlock("C_init");
  ASSERT_NE(init_block, nullptr);
  // Only the spatial variables, bound to the same loops i and j.
  ASSERT_EQ(init_block->iter_vars.size(), 2u);
  EXPECT_EQ(init_block->iter_values[0].ToString(), "i");
  EXPECT_EQ(init_block->iter_values[1].ToString(), "j");
  EXPECT_EQ(PrintStmt(*init_block->body), "C[vi_init, vj_init] = 0.0f\n");
  EXPECT_EQ(init_block->init, nullptr);
  EXPECT_EQ(p.FindBlock("C")->init, nullptr);
  EXPECT_EQ(LoopNames(p, "C_init"), (std::vector<std::string>{"i", "j"}));
  EXPECT_EQ(LoopNames(p, "C"), (std::vector<std::string>{"i", "j", "k"}));
  EXPECT_EQ(BlockOrder(p), (std::vector<std::string>{"C_init", "C"}));
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
}

TEST(DecomposeReduction, AtTheOuterLoopAfterSplit) {
  // i = 7 split by 3 with a tail: the init nest copies i_0, i_1 and j and
  // keeps the tail guard on the copies.
  Program initial = testing::MatmulProgram(7, 5, 4);
  TracedSchedule sch(initial);
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  std::vector<LoopRV> split =
      sch.Split(loops[0], {Factor(), Factor(int64_t{3})}).value();
  auto init = sch.DecomposeReduction(c, split[0]);
  ASSERT_TRUE(init.ok()) << init.status();
  const Program& p = sch.program();
  EXPECT_EQ(LoopNames(p, "C_init"),
            (std::vector<std::string>{"i_0_init", "i_1_init", "j_init"}));
  const BlockNode* init_block = p.FindBlock("C_init");
  EXPECT_EQ(init_block->iter_values[0].ToString(), "i_0_init * 3 + i_1_init");
  EXPECT_EQ(init_block->predicate.ToString(), "i_0_init * 3 + i_1_init < 7");
  EXPECT_EQ(p.FindLoop("i_0_init")->extent, 3);
  EXPECT_EQ(BlockOrder(p), (std::vector<std::string>{"C_init", "C"}));
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
}

TEST(DecomposeReduction, AtTheInnerPartOfASplitLoop) {
  // At i_1: the init sits inside i_0 and copies only i_1 and j.
  Program initial = testing::MatmulProgram(8, 3, 5);
  TracedSchedule sch(initial);
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  std::vector<LoopRV> split =
      sch.Split(loops[0], {Factor(int64_t{2}), Factor()}).value();
  ASSERT_TRUE(sch.DecomposeReduction(c, split[1]).ok());
  const Program& p = sch.program();
  EXPECT_EQ(LoopNames(p, "C_init"),
            (std::vector<std::string>{"i_0", "i_1_init", "j_init"}));
  EXPECT_EQ(p.FindBlock("C_init")->iter_values[0].ToString(),
            "i_0 * 4 + i_1_init");
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
}

TEST(DecomposeReduction, ReductionTailGuardIsLeftToTheUpdate) {
  // k = 13 split by 4 with a tail: the guard k_0 * 4 + k_1 < 13 holds at the
  // first reduction iteration, so every element is initialized.
  Program initial = testing::MatmulProgram(3, 5, 13);
  TracedSchedule sch(initial);
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  std::vector<LoopRV> split =
      sch.Split(loops[2], {Factor(), Factor(int64_t{4})}).value();
  ASSERT_TRUE(sch.DecomposeReduction(c, split[0]).ok());
  EXPECT_EQ(sch.program().FindBlock("C_init")->predicate.ToString(), "true");
  EXPECT_EQ(sch.program().FindBlock("C")->predicate.ToString(),
            "k_0 * 4 + k_1 < 13");
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
}

TEST(DecomposeReduction, AtTheOutermostLoopOfDenseWithConsumers) {
  Program initial = testing::DenseBiasReluProgram(5, 7, 3);
  TracedSchedule sch(initial);
  BlockRV dense = sch.GetBlock("T_dense").value();
  std::vector<LoopRV> loops = sch.GetLoops(dense).value();
  auto init = sch.DecomposeReduction(dense, loops[0]);
  ASSERT_TRUE(init.ok()) << init.status();
  EXPECT_EQ(
      BlockOrder(sch.program()),
      (std::vector<std::string>{"T_dense_init", "T_dense", "T_bias", "Y"}));
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
}

TEST(DecomposeReduction, RejectsNonReductionsAndLoopsNotAbove) {
  TracedSchedule sch(testing::TwoStageProgram(4));
  BlockRV b = sch.GetBlock("B").value();
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> b_loops = sch.GetLoops(b).value();
  std::vector<LoopRV> c_loops = sch.GetLoops(c).value();
  std::string before = PrintProgram(sch.program());
  size_t trace_size = sch.trace().instructions.size();
  auto no_init = sch.DecomposeReduction(b, b_loops[0]);
  ASSERT_FALSE(no_init.ok());
  EXPECT_EQ(no_init.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(no_init.status().message(),
            "decompose_reduction: block \"B\" at loop \"i\": the block has no "
            "init (not a "
            "reduction, or already decomposed)");
  EXPECT_EQ(PrintProgram(sch.program()), before);
  EXPECT_EQ(sch.trace().instructions.size(), trace_size);

  TracedSchedule mm(testing::DenseBiasReluProgram(3, 3, 3));
  BlockRV dense = mm.GetBlock("T_dense").value();
  std::vector<LoopRV> bias_loops =
      mm.GetLoops(mm.GetBlock("T_bias").value()).value();
  auto not_above = mm.DecomposeReduction(dense, bias_loops[0]);
  ASSERT_FALSE(not_above.ok());
  EXPECT_EQ(not_above.status().message(),
            "decompose_reduction: block \"T_dense\" at loop \"i_1\": the loop "
            "is not above "
            "the block");
}

TEST(DecomposeReduction, RejectsSecondDecomposition) {
  TracedSchedule sch(testing::MatmulProgram(3, 3, 3));
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  ASSERT_TRUE(sch.DecomposeReduction(c, loops[2]).ok());
  auto again = sch.DecomposeReduction(c, loops[1]);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().message(),
            "decompose_reduction: block \"C\" at loop \"j\": the block has no "
            "init (not a "
            "reduction, or already decomposed)");
}

TEST(DecomposeReduction, RejectsReductionLoopAboveTheLoop) {
  // for k: for i: for j: C: decomposing at i would re-initialize C for each k.
  Program p = testing::MatmulProgram(3, 4, 5);
  ReorderMatmulNest(&p, {"k", "i", "j"});
  Program original = p;
  auto result = primitive::DecomposeReduction(&p, "C", "i");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(result.status().message(),
            "decompose_reduction: block \"C\" at loop \"i\": loop \"k\" above "
            "it is a "
            "reduction loop of the block");
  // At k itself it works, and computes the same.
  Program at_k = original;
  ASSERT_TRUE(primitive::DecomposeReduction(&at_k, "C", "k").ok());
  absl::Status same = testing::CheckSameResult(original, at_k);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(at_k);
}

TEST(DecomposeReduction, RejectsLoopSharedBySpatialAndReduction) {
  // One loop f over i and k (as after fusing them): f // 4 = i, f % 4 = k.
  Program p = testing::VectorSumProgram(4);
  BlockNode* s = p.FindBlock("S");
  Expr f = Var("f");
  s->iter_values[0] = FloorDiv(f, 4);
  s->iter_values[1] = FloorMod(f, 4);
  p.root->body = MakeFor(f, 4, CloneStmt(*s));
  auto result = primitive::DecomposeReduction(&p, "S", "f");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "decompose_reduction: block \"S\" at loop \"f\": loop \"f\" is "
            "used by both "
            "spatial and reduction bindings");
}

TEST(DecomposeReduction, RejectsPredicateItCannotSplit) {
  // A guard mixing spatial and reduction loops.
  Program p = testing::MatmulProgram(4, 4, 4);
  BlockNode* c = p.FindBlock("C");
  c->predicate = p.FindLoop("i")->var + p.FindLoop("k")->var < 6;
  auto mixed = primitive::DecomposeReduction(&p, "C", "i");
  ASSERT_FALSE(mixed.ok());
  EXPECT_EQ(mixed.status().message(),
            "decompose_reduction: block \"C\" at loop \"i\": cannot tell which "
            "elements the "
            "predicate i + k < 6 initializes");
  // A reduction-only guard false at the first iteration.
  c->predicate = p.FindLoop("k")->var > 0;
  auto skips_first = primitive::DecomposeReduction(&p, "C", "i");
  ASSERT_FALSE(skips_first.ok());
  EXPECT_EQ(skips_first.status().message(),
            "decompose_reduction: block \"C\" at loop \"i\": cannot tell which "
            "elements the "
            "predicate k > 0 initializes");
}

TEST(DecomposeReduction, RejectsInitReadingWhatALaterBlockUnderTheLoopWrites) {
  // for outer: { B[i] = A[i] * 2; S[i] = init B[i], S[i] + A[k] }: the init
  // cannot move before B.
  te::Tensor a = te::Placeholder("A", {4});
  te::Tensor b = te::Compute("B", {4}, {"i"}, [&](const std::vector<Expr>& ax) {
    return a({ax[0]}) * 2.0;
  });
  te::ReduceAxis rk = te::MakeReduceAxis(4, "k");
  te::Tensor sum =
      te::ComputeReduction("S", {4}, {"i"}, [&](const std::vector<Expr>& ax) {
        return te::Sum(b({rk.var}) + a({ax[0]}), {rk});
      });
  Program p = te::CreateProgram("seeded_sum", {a}, {sum}).value();
  BlockNode* s = p.FindBlock("S");
  s->init->as<StoreNode>()->value = Load(b.buffer(), {s->iter_vars[0].var});
  auto* seq = p.root->body->as<SeqNode>();
  std::vector<StmtPtr> stages;
  for (StmtPtr& stage : seq->stmts) stages.push_back(std::move(stage));
  p.root->body = MakeFor(Var("outer"), 1, MakeSeq(std::move(stages)));
  auto result = primitive::DecomposeReduction(&p, "S", "outer");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "decompose_reduction: block \"S\" at loop \"outer\": block \"B\" "
            "under the loop "
            "writes B, which the init uses");
  // At S's own loop, B has already run: fine.
  Program original = p;
  ASSERT_TRUE(primitive::DecomposeReduction(&p, "S", "i_1").ok())
      << PrintProgram(p);
  absl::Status same = testing::CheckSameResult(original, p);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
}

TEST(DecomposeReduction, UnknownNames) {
  Program p = testing::MatmulProgram(2, 2, 2);
  auto block = primitive::DecomposeReduction(&p, "X", "i");
  ASSERT_FALSE(block.ok());
  EXPECT_EQ(block.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(block.status().message(),
            "decompose_reduction: no block named \"X\"");
  auto loop = primitive::DecomposeReduction(&p, "C", "q");
  ASSERT_FALSE(loop.ok());
  EXPECT_EQ(loop.status().message(),
            "decompose_reduction: no loop named \"q\"");
}

TEST(DecomposeReduction, AtEveryLoopOfATiledNest) {
  // Odd extents, splits with tails on every axis: decomposing at any loop
  // but k_1 (under the reduction loop k_0) computes the same.
  Program initial = testing::MatmulProgram(7, 11, 5);
  for (size_t at = 0; at < 6; ++at) {
    TracedSchedule sch(initial);
    BlockRV c = sch.GetBlock("C").value();
    std::vector<LoopRV> loops = sch.GetLoops(c).value();
    ASSERT_TRUE(sch.Split(loops[0], {Factor(), Factor(int64_t{2})}).ok());
    ASSERT_TRUE(sch.Split(loops[1], {Factor(), Factor(int64_t{4})}).ok());
    ASSERT_TRUE(sch.Split(loops[2], {Factor(), Factor(int64_t{3})}).ok());
    loops = sch.GetLoops(c).value();
    ASSERT_EQ(loops.size(), 6u);
    auto init = sch.DecomposeReduction(c, loops[at]);
    if (at == 5) {
      ASSERT_FALSE(init.ok());
      EXPECT_EQ(init.status().message(),
                "decompose_reduction: block \"C\" at loop \"k_1\": loop "
                "\"k_0\" above it is "
                "a reduction loop of the block");
      continue;
    }
    ASSERT_TRUE(init.ok()) << "at loop " << at << ": " << init.status();
    absl::Status same = testing::CheckSameResult(initial, sch.program());
    EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
  }
}

TEST(DecomposeReduction, RoundTripsThroughTrace) {
  Program initial = testing::MatmulProgram(9, 10, 11);
  TracedSchedule sch(initial, /*seed=*/3);
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  std::vector<ExprRV> tiles = sch.SamplePerfectTile(loops[1], 2, 8).value();
  std::vector<LoopRV> j = sch.Split(loops[1], {tiles[0], tiles[1]}).value();
  ASSERT_TRUE(sch.Split(loops[2], {Factor(), Factor(int64_t{4})}).ok());
  ASSERT_TRUE(sch.DecomposeReduction(c, j[1]).ok());
  absl::Status round_trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(round_trip.ok()) << round_trip;
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
}

TEST(DecomposeReduction, CorrectnessCheckSeesAnInitThatMissesElements) {
  // Guards the correctness tests above: an init block that skips a row is
  // caught by the interpreter's read-before-write check.
  Program initial = testing::MatmulProgram(7, 5, 13);
  TracedSchedule sch(initial);
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  std::vector<LoopRV> split =
      sch.Split(loops[0], {Factor(), Factor(int64_t{3})}).value();
  ASSERT_TRUE(sch.DecomposeReduction(c, split[1]).ok());
  EXPECT_TRUE(testing::CheckSameResult(initial, sch.program()).ok());
  Program wrong = sch.program();
  wrong.FindBlock("C_init")->predicate = wrong.FindLoop("i_1_init")->var < 2;
  absl::Status status = testing::CheckSameResult(initial, wrong);
  EXPECT_NE(status.message().find("before it was written"),
            absl::string_view::npos)
      << status;
}

}  // namespace
}  // namespace lathe

namespace lathe {
namespace {

// A row max computed at its consumer's column loop is recomputed for every
// column: its init must stay inside that loop.
TEST(DecomposeReduction, RefusesToHoistTheInitAboveARecomputingLoop) {
  te::Tensor x = te::Placeholder("X", {3, 5});
  te::ReduceAxis k = te::MakeReduceAxis(5, "k");
  te::Tensor m =
      te::ComputeReduction("M", {3}, {"i"}, [&](const std::vector<Expr>& ax) {
        return te::MaxOver(x({ax[0], k.var}), {k});
      });
  te::Tensor y =
      te::Compute("Y", {3, 5}, {"i", "j"}, [&](const std::vector<Expr>& ax) {
        return x({ax[0], ax[1]}) - m({ax[0]});
      });
  Program initial = te::CreateProgram("row_center", {x}, {y}).value();
  TracedSchedule sch(initial);
  BlockRV m_block = sch.GetBlock("M").value();
  std::vector<LoopRV> y_loops = sch.GetLoops(sch.GetBlock("Y").value()).value();
  ASSERT_TRUE(sch.ComputeAt(m_block, y_loops[1]).ok());
  std::string before = PrintProgram(sch.program());
  absl::StatusOr<BlockRV> init = sch.DecomposeReduction(m_block, y_loops[1]);
  ASSERT_FALSE(init.ok()) << PrintProgram(sch.program());
  EXPECT_NE(init.status().message().find("repeats the reduction"),
            std::string::npos)
      << init.status();
  EXPECT_EQ(PrintProgram(sch.program()), before);
  // At the block's own reduction loop it still applies, and stays correct.
  std::vector<LoopRV> m_loops = sch.GetLoops(m_block).value();
  ASSERT_TRUE(sch.DecomposeReduction(m_block, m_loops.back()).ok());
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
}

}  // namespace
}  // namespace lathe
