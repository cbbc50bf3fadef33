#include "compiler/schedule/primitive/rfactor.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/schedule/traced_schedule.h"
#include "tests/compiler/schedule/same_result.h"
#include "tests/compiler/schedule/test_programs.h"
#include "tests/compiler/schedule/trace_round_trip.h"

namespace lathe {
namespace {

std::vector<std::string> BlockOrder(const Program& p) {
  std::vector<std::string> names;
  for (BlockNode* b : p.Blocks()) names.push_back(b->name);
  return names;
}

std::vector<std::string> LoopNames(const Program& p, const std::string& block) {
  std::vector<std::string> names;
  for (ForNode* l : p.LoopsAbove(p.FindBlock(block)))
    names.push_back(l->var->name);
  return names;
}

BufferPtr Allocated(const Program& p, const std::string& name) {
  for (const BufferPtr& b : p.root->alloc_buffers) {
    if (b->name == name) return b;
  }
  return nullptr;
}

// The iteration variables of a block as "name:type(extent)=binding".
std::vector<std::string> IterVars(const BlockNode& block) {
  std::vector<std::string> out;
  for (size_t i = 0; i < block.iter_vars.size(); ++i) {
    const IterVar& iv = block.iter_vars[i];
    out.push_back(absl::StrCat(iv.var->name, ":", IterTypeName(iv.type), "(",
                               iv.extent,
                               ")=", block.iter_values[i].ToString()));
  }
  return out;
}

// A matmul whose k loop is split into (k_0, k_1) with the given factors.
TracedSchedule SplitK(const Program& initial, std::vector<Factor> factors) {
  TracedSchedule sch(initial);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  absl::StatusOr<std::vector<LoopRV>> split = sch.Split(loops[2], factors);
  EXPECT_TRUE(split.ok()) << split.status();
  return sch;
}

LoopRV Loop(TracedSchedule& sch, const std::string& block, size_t index) {
  return sch.GetLoops(sch.GetBlock(block).value()).value()[index];
}

TEST(RFactor, SumOverInnerPartOfSplitK) {
  Program initial = testing::MatmulProgram(4, 5, 64);
  TracedSchedule sch = SplitK(initial, {Factor(), Factor(int64_t{8})});
  auto rf = sch.RFactor(Loop(sch, "C", 3), 0);  // k_1
  ASSERT_TRUE(rf.ok()) << rf.status();
  const Program& p = sch.program();
  EXPECT_EQ(sch.BlockName(*rf).value(), "C_rf");
  BufferPtr rf_buffer = Allocated(p, "C_rf");
  ASSERT_NE(rf_buffer, nullptr);
  EXPECT_EQ(rf_buffer->shape, (std::vector<int64_t>{8, 4, 5}));
  // k_1 is now spatial in C_rf; the rest of k is a reduction over k_0.
  const BlockNode* rf_block = p.FindBlock("C_rf");
  EXPECT_EQ(
      IterVars(*rf_block),
      (std::vector<std::string>{"vi:spatial(4)=i", "vj:spatial(5)=j",
                                "vk_1:spatial(8)=k_1", "vk_0:reduce(8)=k_0"}));
  EXPECT_EQ(PrintStmt(*rf_block->init), "C_rf[vk_1, vi, vj] = 0.0f\n");
  EXPECT_EQ(
      PrintStmt(*rf_block->body),
      "C_rf[vk_1, vi, vj] = C_rf[vk_1, vi, vj] + A[vi, vk_0 * 8 + vk_1] * "
      "B[vk_0 * 8 + vk_1, vj]\n");
  EXPECT_EQ(LoopNames(p, "C_rf"),
            (std::vector<std::string>{"i", "j", "k_0", "k_1"}));
  // C reduces C_rf over its first dimension, after the rfactor nest.
  const BlockNode* c = p.FindBlock("C");
  EXPECT_EQ(IterVars(*c), (std::vector<std::string>{"vax0:spatial(4)=ax0",
                                                    "vax1:spatial(5)=ax1",
                                                    "vax2:reduce(8)=ax2"}));
  EXPECT_EQ(PrintStmt(*c->body),
            "C[vax0, vax1] = C[vax0, vax1] + C_rf[vax2, vax0, vax1]\n");
  EXPECT_EQ(PrintStmt(*c->init), "C[vax0, vax1] = 0.0f\n");
  EXPECT_EQ(BlockOrder(p), (std::vector<std::string>{"C_rf", "C"}));
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
}

TEST(RFactor, SumOverOuterPartWithTheNewAxisLast) {
  Program initial = testing::MatmulProgram(3, 5, 64);
  TracedSchedule sch = SplitK(initial, {Factor(int64_t{4}), Factor()});
  auto rf = sch.RFactor(Loop(sch, "C", 2), 2);  // k_0, extent 4
  ASSERT_TRUE(rf.ok()) << rf.status();
  const Program& p = sch.program();
  EXPECT_EQ(Allocated(p, "C_rf")->shape, (std::vector<int64_t>{3, 5, 4}));
  EXPECT_EQ(
      IterVars(*p.FindBlock("C_rf")),
      (std::vector<std::string>{"vi:spatial(3)=i", "vj:spatial(5)=j",
                                "vk_0:spatial(4)=k_0", "vk_1:reduce(16)=k_1"}));
  EXPECT_EQ(PrintStmt(*p.FindBlock("C")->body),
            "C[vax0, vax1] = C[vax0, vax1] + C_rf[vax0, vax1, vax2]\n");
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
}

TEST(RFactor, PrimeExtentWithFactorOne) {
  // K = 13 split as 13 x 1: no tail, either part can be factorized.
  Program initial = testing::MatmulProgram(3, 7, 13);
  for (size_t part : {2u, 3u}) {
    TracedSchedule sch = SplitK(initial, {Factor(), Factor(int64_t{1})});
    auto rf = sch.RFactor(Loop(sch, "C", part), 1);
    ASSERT_TRUE(rf.ok()) << rf.status();
    EXPECT_EQ(Allocated(sch.program(), "C_rf")->shape,
              (std::vector<int64_t>{3, part == 2 ? 13 : 1, 7}));
    absl::Status same = testing::CheckSameResult(initial, sch.program());
    EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
  }
}

TEST(RFactor, TailOfANonDivisibleSplitWhenEveryPartialSumHasWork) {
  // K = 13 split as 4 x 4 with a tail (k_0 * 4 + k_1 < 13): every value of
  // k_0 and of k_1 has at least one valid iteration, the first one included.
  Program initial = testing::MatmulProgram(3, 4, 13);
  for (size_t part : {2u, 3u}) {
    TracedSchedule sch = SplitK(initial, {Factor(), Factor(int64_t{4})});
    ASSERT_EQ(sch.program().FindBlock("C")->predicate.ToString(),
              "k_0 * 4 + k_1 < 13");
    auto rf = sch.RFactor(Loop(sch, "C", part), 0);
    ASSERT_TRUE(rf.ok()) << rf.status();
    EXPECT_EQ(sch.program().FindBlock("C_rf")->predicate.ToString(),
              "k_0 * 4 + k_1 < 13");
    absl::Status same = testing::CheckSameResult(initial, sch.program());
    EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
  }
}

TEST(RFactor, RejectsPartialSumsThatNoIterationInitializes) {
  // K = 13 split as 5 x 4: k_0 = 4 covers k = 16..19, all past the end, so
  // C_rf[4, ...] would never be written (nor initialized).
  Program initial = testing::MatmulProgram(3, 4, 13);
  TracedSchedule sch =
      SplitK(initial, {Factor(int64_t{5}), Factor(int64_t{4})});
  LoopRV k_0 = Loop(sch, "C", 2);
  std::string before = PrintProgram(sch.program());
  size_t trace_size = sch.trace().instructions.size();
  auto rf = sch.RFactor(k_0, 0);
  ASSERT_FALSE(rf.ok());
  EXPECT_EQ(rf.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(rf.status().message(),
            "rfactor: loop \"k_0\" of block \"C\": some iterations of the loop "
            "run no instance "
            "(predicate k_0 * 4 + k_1 < 13), their partial results would never "
            "be initialized");
  EXPECT_EQ(PrintProgram(sch.program()), before);
  EXPECT_EQ(sch.trace().instructions.size(), trace_size);
  // Over k_1 each partial sum has work (k_0 = 0): accepted and correct.
  auto inner = sch.RFactor(Loop(sch, "C", 3), 0);
  ASSERT_TRUE(inner.ok()) << inner.status();
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
}

TEST(RFactor, RowMaxOfASoftmax) {
  Program initial = testing::RowMaxProgram(7, 33);
  TracedSchedule sch(initial);
  BlockRV m = sch.GetBlock("M").value();
  std::vector<LoopRV> loops = sch.GetLoops(m).value();
  ASSERT_TRUE(sch.Split(loops[1], {Factor(), Factor(int64_t{8})}).ok());
  auto rf = sch.RFactor(Loop(sch, "M", 2), 1);
  ASSERT_TRUE(rf.ok()) << rf.status();
  const Program& p = sch.program();
  EXPECT_EQ(Allocated(p, "M_rf")->shape, (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(PrintStmt(*p.FindBlock("M_rf")->init), "M_rf[vi, vk_1] = -inf\n");
  EXPECT_EQ(PrintStmt(*p.FindBlock("M")->body),
            "M[vax0] = max(M[vax0], M_rf[vax0, vax1])\n");
  for (uint64_t seed : {1, 5, 9}) {
    absl::Status same =
        testing::CheckSameResult(initial, p, seed, /*tolerance=*/0);
    EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
  }
  absl::Status round_trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(round_trip.ok()) << round_trip;
}

TEST(RFactor, MinReductionAndScalarOutput) {
  te::Tensor a = te::Placeholder("A", {3, 10});
  te::ReduceAxis rk = te::MakeReduceAxis(10, "k");
  te::Tensor lo =
      te::ComputeReduction("L", {3}, {"i"}, [&](const std::vector<Expr>& ax) {
        return te::MinOver(a({ax[0], rk.var}), {rk});
      });
  Program min_program = te::CreateProgram("row_min", {a}, {lo}).value();
  TracedSchedule sch(min_program);
  ASSERT_TRUE(sch.RFactor(Loop(sch, "L", 1), 0).ok());
  absl::Status same = testing::CheckSameResult(min_program, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());

  // Sum to a [1] buffer, the unsplit k loop factorized whole.
  Program sum = testing::VectorSumProgram(11);
  TracedSchedule s2(sum);
  auto rf = s2.RFactor(Loop(s2, "S", 1), 1);
  ASSERT_TRUE(rf.ok()) << rf.status();
  EXPECT_EQ(Allocated(s2.program(), "S_rf")->shape,
            (std::vector<int64_t>{1, 11}));
  EXPECT_EQ(
      IterVars(*s2.program().FindBlock("S_rf")),
      (std::vector<std::string>{"vi:spatial(1)=i", "vk_1:spatial(11)=k"}));
  EXPECT_EQ(s2.program().FindBlock("S_rf")->init, nullptr);
  EXPECT_EQ(PrintStmt(*s2.program().FindBlock("S_rf")->body),
            "S_rf[vi, vk_1] = A[vk_1]\n");
  same = testing::CheckSameResult(sum, s2.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(s2.program());
}

TEST(RFactor, RejectsLoopsThatAreNotReductionLoopsOfOneBlock) {
  TracedSchedule sch(testing::MatmulProgram(4, 4, 8));
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  std::string before = PrintProgram(sch.program());
  auto spatial = sch.RFactor(loops[0], 0);
  ASSERT_FALSE(spatial.ok());
  EXPECT_EQ(spatial.status().message(),
            "rfactor: loop \"i\" of block \"C\": spatial iteration variable "
            "\"vi\" is bound "
            "to it");
  auto axis = sch.RFactor(loops[2], 3);
  ASSERT_FALSE(axis.ok());
  EXPECT_EQ(axis.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(axis.status().message(),
            "rfactor: factor_axis 3 is out of range [0, 2] for buffer \"C\"");
  auto negative = sch.RFactor(loops[2], -1);
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PrintProgram(sch.program()), before);

  // After decompose_reduction at j, loop i holds two blocks and C has no init.
  ASSERT_TRUE(sch.DecomposeReduction(c, loops[1]).ok());
  auto two_blocks = sch.RFactor(loops[0], 0);
  ASSERT_FALSE(two_blocks.ok());
  EXPECT_EQ(two_blocks.status().message(),
            "rfactor: loop \"i\" has 2 blocks under it, expected 1");
  auto no_init = sch.RFactor(loops[2], 0);
  ASSERT_FALSE(no_init.ok());
  EXPECT_EQ(no_init.status().message(),
            "rfactor: loop \"k\" of block \"C\": not a recognized reduction: "
            "it has no init "
            "of a single store");
}

TEST(RFactor, RejectsUnrecognizedCombinersAndBindings) {
  // C = C * x is not a supported reduction.
  Program product = testing::VectorSumProgram(5);
  auto* store = product.FindBlock("S")->body->as<StoreNode>();
  store->value = store->value.operand(0) * store->value.operand(1);
  auto mul = primitive::RFactor(&product, "k", 0);
  ASSERT_FALSE(mul.ok());
  EXPECT_EQ(mul.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(mul.status().message(),
            "rfactor: loop \"k\" of block \"S\": not a recognized reduction: "
            "its update is "
            "not C = C + x, max(C, x) or min(C, x)");
  // A max with a sum's identity.
  Program bad_init = testing::RowMaxProgram(2, 4);
  bad_init.FindBlock("M")->init->as<StoreNode>()->value = Expr(0.0);
  auto init = primitive::RFactor(&bad_init, "k", 0);
  ASSERT_FALSE(init.ok());
  EXPECT_EQ(init.status().message(),
            "rfactor: loop \"k\" of block \"M\": not a recognized reduction: "
            "its init does not "
            "store the identity of max into the element it updates");
  // Unknown loop.
  Program p = testing::VectorSumProgram(5);
  auto unknown = primitive::RFactor(&p, "z", 0);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(), "rfactor: no loop named \"z\"");
  // A predicate that is not a tail guard.
  Program guarded = testing::VectorSumProgram(5);
  guarded.FindBlock("S")->predicate = guarded.FindLoop("k")->var > 1;
  auto guard = primitive::RFactor(&guarded, "k", 0);
  ASSERT_FALSE(guard.ok());
  EXPECT_EQ(guard.status().message(),
            "rfactor: loop \"k\" of block \"S\": predicate k > 1 is not a "
            "split tail guard");
}

TEST(RFactor, EverySplitOfSmallReductions) {
  // Every iteration of the factorized loop must have work: with one outer
  // iteration too many, the last k_0 has none; with an inner factor larger
  // than K, the last k_1 has none. Those are refused; every accepted result
  // must compute the same.
  for (int64_t k : {1, 2, 7, 13, 16}) {
    Program initial = testing::MatmulProgram(2, 3, k);
    for (int64_t f : {1, 2, 3, 4, 8}) {
      for (size_t part : {2u, 3u}) {
        for (bool extra_outer : {false, true}) {
          int64_t outer = (k + f - 1) / f + (extra_outer ? 1 : 0);
          TracedSchedule sch = SplitK(initial, {Factor(outer), Factor(f)});
          auto rf =
              sch.RFactor(Loop(sch, "C", part), static_cast<int64_t>(part) - 2);
          SCOPED_TRACE(absl::StrCat("K=", k, " factors ", outer, "x", f,
                                    " part ", part));
          if ((extra_outer && part == 2) || (f > k && part == 3)) {
            ASSERT_FALSE(rf.ok());
            EXPECT_EQ(rf.status().code(),
                      absl::StatusCode::kFailedPrecondition);
            continue;
          }
          ASSERT_TRUE(rf.ok()) << rf.status();
          absl::Status same = testing::CheckSameResult(initial, sch.program());
          EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
        }
      }
    }
  }
}

TEST(RFactor, RoundTripsThroughTraceWithSampledSplit) {
  Program initial = testing::MatmulProgram(5, 6, 48);
  TracedSchedule sch(initial, /*seed=*/11);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  std::vector<ExprRV> tiles = sch.SamplePerfectTile(loops[2], 2, 16).value();
  std::vector<LoopRV> k = sch.Split(loops[2], {tiles[0], tiles[1]}).value();
  auto rf = sch.RFactor(k[1], 1);
  ASSERT_TRUE(rf.ok()) << rf.status();
  // The factorized loop is now spatial: the partial sums can be decomposed
  // and split like any other stage.
  std::vector<LoopRV> rf_loops = sch.GetLoops(*rf).value();
  ASSERT_TRUE(sch.DecomposeReduction(*rf, rf_loops[2]).ok());
  absl::Status round_trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(round_trip.ok()) << round_trip;
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
}

}  // namespace
}  // namespace lathe
