#include "compiler/schedule/primitive/cache_write.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/schedule/traced_schedule.h"
#include "tests/compiler/schedule/same_result.h"
#include "tests/compiler/schedule/test_programs.h"
#include "tests/compiler/schedule/trace_round_trip.h"

namespace lathe {
namespace {

bool Contains(absl::string_view text, absl::string_view part) {
  return text.find(part) != absl::string_view::npos;
}

std::vector<std::string> BlockOrder(const Program& p) {
  std::vector<std::string> names;
  for (BlockNode* b : p.Blocks()) names.push_back(b->name);
  return names;
}

BufferPtr Allocated(const Program& p, const std::string& name) {
  for (const BufferPtr& b : p.root->alloc_buffers) {
    if (b->name == name) return b;
  }
  return nullptr;
}

// Puts all top-level statements of the root under one loop of extent 1.
void NestUnderOneLoop(Program* p) {
  auto* seq = p->root->body->as<SeqNode>();
  std::vector<StmtPtr> stages;
  for (StmtPtr& s : seq->stmts) stages.push_back(std::move(s));
  p->root->body = MakeFor(Var("outer"), 1, MakeSeq(std::move(stages)));
}

TEST(CacheWrite, MatmulAccumulatesInLocalCache) {
  Program initial = testing::MatmulProgram(7, 13, 11);
  TracedSchedule sch(initial);
  auto write_back = sch.CacheWrite(sch.GetBlock("C").value(), 0, "local");
  ASSERT_TRUE(write_back.ok()) << write_back.status();
  const Program& p = sch.program();
  EXPECT_EQ(sch.BlockName(*write_back).value(), "C_local");
  BufferPtr cache = Allocated(p, "C_local");
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ(cache->shape, (std::vector<int64_t>{7, 13}));
  EXPECT_EQ(cache->scope, BufferScope::kLocal);
  const BlockNode* c = p.FindBlock("C");
  EXPECT_EQ(PrintStmt(*c->init), "C_local[vi, vj] = 0.0f\n");
  EXPECT_EQ(PrintStmt(*c->body),
            "C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]\n");
  EXPECT_EQ(PrintStmt(*p.FindBlock("C_local")->body),
            "C[vax0, vax1] = C_local[vax0, vax1]\n");
  EXPECT_EQ(BlockOrder(p), (std::vector<std::string>{"C", "C_local"}));
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
}

TEST(CacheWrite, IntermediateWithLayoutKeepsConsumersCorrect) {
  // T_dense written in a [N / 4][M][4] layout; T_bias still reads T_dense.
  Program initial = testing::DenseBiasReluProgram(5, 10, 3);
  TracedSchedule sch(initial);
  auto write_back = sch.CacheWrite(sch.GetBlock("T_dense").value(), 0, "global",
                                   Layout{{1, 4}, {1, 0, 2}});
  ASSERT_TRUE(write_back.ok()) << write_back.status();
  const Program& p = sch.program();
  EXPECT_EQ(Allocated(p, "T_dense_global")->shape,
            (std::vector<int64_t>{3, 5, 4}));
  EXPECT_EQ(BlockOrder(p), (std::vector<std::string>{
                               "T_dense", "T_dense_global", "T_bias", "Y"}));
  EXPECT_TRUE(Contains(PrintStmt(*p.FindBlock("T_bias")->body), "T_dense["))
      << PrintProgram(p);
  for (uint64_t seed : {1, 7}) {
    absl::Status same = testing::CheckSameResult(initial, p, seed);
    EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
  }
}

TEST(CacheWrite, AfterNonDivisibleSplitTheTailGuardIsAccepted) {
  Program initial = testing::MatmulProgram(7, 5, 3);
  TracedSchedule sch(initial);
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  ASSERT_TRUE(sch.Split(loops[0], {Factor(), Factor(int64_t{3})}).ok());
  ASSERT_EQ(sch.program().FindBlock("C")->predicate.ToString(),
            "i_0 * 3 + i_1 < 7");
  auto write_back = sch.CacheWrite(c, 0, "local");
  ASSERT_TRUE(write_back.ok()) << write_back.status();
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
}

TEST(CacheWrite, RejectsBadArgumentsAndLeavesProgramUnchanged) {
  TracedSchedule sch(testing::MatmulProgram(4, 8, 4));
  BlockRV c = sch.GetBlock("C").value();
  std::string before = PrintProgram(sch.program());
  size_t trace_size = sch.trace().instructions.size();
  auto index = sch.CacheWrite(c, 1, "local");
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      index.status().message(),
      "cache_write: block \"C\" writes 1 buffer, index 1 is out of range");
  auto layout = sch.CacheWrite(c, 0, "local", Layout{{2}, {}});
  ASSERT_FALSE(layout.ok());
  EXPECT_EQ(layout.status().message(),
            "cache_write: buffer \"C\" of block \"C\": layout: 1 splits for a "
            "buffer of rank 2");
  auto scope = sch.CacheWrite(c, 0, "registers");
  ASSERT_FALSE(scope.ok());
  EXPECT_TRUE(
      Contains(scope.status().message(), "cache_write: unknown buffer scope"))
      << scope.status();
  EXPECT_EQ(PrintProgram(sch.program()), before);
  EXPECT_EQ(sch.trace().instructions.size(), trace_size);
}

TEST(CacheWrite, RejectsSecondWriter) {
  // After decompose_reduction, C_init and C both write C.
  TracedSchedule sch(testing::MatmulProgram(4, 4, 4));
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  ASSERT_TRUE(sch.DecomposeReduction(c, loops[2]).ok());
  std::string before = PrintProgram(sch.program());
  auto result = sch.CacheWrite(c, 0, "local");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(result.status().message(),
            "cache_write: buffer \"C\" of block \"C\": block \"C_init\" writes "
            "it too");
  EXPECT_EQ(PrintProgram(sch.program()), before);
}

TEST(CacheWrite, RejectsReaderInTheSameNest) {
  Program p = testing::TwoStageProgram(4);
  NestUnderOneLoop(&p);
  auto result =
      primitive::CacheWrite(&p, "B", 0, BufferScope::kLocal, Layout{});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "cache_write: buffer \"B\" of block \"B\": block \"C\" reads it in "
            "the same loop "
            "nest, before the write-back");
}

TEST(CacheWrite, RejectsPartialWriters) {
  // A predicate that is not a split tail guard may skip elements.
  Program guarded = testing::TwoStageProgram(6);
  guarded.root->body->as<SeqNode>()
      ->stmts[0]
      ->as<ForNode>()
      ->body->as<BlockNode>()
      ->predicate = guarded.FindLoop("i")->var < 3;
  auto skip =
      primitive::CacheWrite(&guarded, "B", 0, BufferScope::kLocal, Layout{});
  ASSERT_FALSE(skip.ok());
  EXPECT_EQ(skip.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(skip.status().message(),
            "cache_write: buffer \"B\" of block \"B\": the block's predicate i "
            "< 3 may skip "
            "elements");
  // A store at an index that is not an iteration variable.
  Program shifted = testing::TwoStageProgram(6);
  BlockNode* b = shifted.FindBlock("B");
  b->body->as<StoreNode>()->indices[0] = 5 - b->iter_vars[0].var;
  auto index =
      primitive::CacheWrite(&shifted, "B", 0, BufferScope::kLocal, Layout{});
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.status().message(),
            "cache_write: buffer \"B\" of block \"B\": the block does not "
            "write it at distinct "
            "spatial iteration variables covering its shape");
}

TEST(CacheWrite, RejectsInputsAndUnknownBlocks) {
  // A block that (wrongly) stores into an input: refused, not cached.
  Program p = testing::TwoStageProgram(3);
  BlockNode* b = p.FindBlock("B");
  b->body->as<StoreNode>()->buffer = p.inputs[0];
  auto input = primitive::CacheWrite(&p, "B", 0, BufferScope::kLocal, Layout{});
  ASSERT_FALSE(input.ok());
  EXPECT_EQ(input.status().message(),
            "cache_write: buffer \"A\" of block \"B\": is a program input");
  auto unknown =
      primitive::CacheWrite(&p, "Z", 0, BufferScope::kLocal, Layout{});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(), "cache_write: no block named \"Z\"");
}

TEST(CacheWrite, GemmPipelineRoundTripsThroughTrace) {
  // Pack B in panels, accumulate C locally, decompose the reduction: the
  // shape of the GEMM schedules the search builds.
  Program initial = testing::MatmulProgram(6, 40, 9);
  TracedSchedule sch(initial);
  BlockRV c = sch.GetBlock("C").value();
  ASSERT_TRUE(sch.CacheRead(c, 1, "global", Layout{{1, 16}, {1, 0, 2}}).ok());
  auto write_back = sch.CacheWrite(c, 0, "local", Layout{{1, 8}, {}});
  ASSERT_TRUE(write_back.ok()) << write_back.status();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  ASSERT_TRUE(sch.Split(loops[1], {Factor(), Factor(int64_t{16})}).ok());
  loops = sch.GetLoops(c).value();
  ASSERT_TRUE(sch.DecomposeReduction(c, loops[3]).ok());
  absl::Status round_trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(round_trip.ok()) << round_trip;
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
}

}  // namespace
}  // namespace lathe
