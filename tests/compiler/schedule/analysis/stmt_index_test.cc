// StmtIndex: every query gives what its counterpart (Program, loop_ranges.h,
// block_motion.h) gives, for every statement (and pair of statements) of
// programs with nested loops, sequences, several blocks under one loop,
// blocks inside blocks' bodies and init statements.
#include "compiler/schedule/analysis/stmt_index.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/schedule/analysis/block_motion.h"
#include "compiler/schedule/analysis/loop_ranges.h"
#include "compiler/schedule/default_schedule.h"
#include "compiler/schedule/replay.h"
#include "compiler/schedule/traced_schedule.h"
#include "compiler/workload/spec.h"
#include "tests/compiler/schedule/test_programs.h"

namespace lathe {
namespace {

std::vector<const StmtNode*> AllStmts(const Program& p) {
  std::vector<const StmtNode*> all;
  VisitStmts(static_cast<const StmtNode*>(p.root.get()),
             [&](const StmtNode* s) {
               all.push_back(s);
               return true;
             });
  return all;
}

std::vector<const Buffer*> AllBuffers(const Program& p) {
  std::vector<const Buffer*> buffers;
  for (const BufferPtr& b : p.Params()) buffers.push_back(b.get());
  for (const BlockNode* block : p.Blocks()) {
    for (const BufferPtr& b : block->alloc_buffers) buffers.push_back(b.get());
  }
  for (const BufferPtr& b : p.root->alloc_buffers) buffers.push_back(b.get());
  return buffers;
}

void ExpectSameAsProgram(const Program& p) {
  const StmtIndex index(p);
  const std::string text = PrintProgram(p);
  EXPECT_EQ(index.Blocks(), p.Blocks()) << text;
  std::vector<const StmtNode*> all = AllStmts(p);
  for (const StmtNode* s : all) {
    EXPECT_EQ(index.ParentOf(s), p.ParentOf(s)) << text;
    EXPECT_EQ(index.LoopsAbove(s), p.LoopsAbove(s)) << text;
    EXPECT_EQ(index.EnclosingBlock(s), p.EnclosingBlock(s)) << text;
    EXPECT_EQ(index.LoopRangesAbove(s).size(), LoopRangesAbove(p, s).size())
        << text;
    for (const auto& [var, range] : LoopRangesAbove(p, s)) {
      ASSERT_TRUE(index.LoopRangesAbove(s).count(var)) << text;
      EXPECT_EQ(index.LoopRangesAbove(s).at(var).max, range.max) << text;
    }
    for (const StmtNode* t : all) {
      EXPECT_EQ(index.Contains(s, t), Contains(s, t)) << text;
      EXPECT_EQ(index.ComesBefore(s, t), ComesBefore(p, s, t)) << text;
    }
  }
  for (const BlockNode* b : p.Blocks()) {
    const BlockAccesses& indexed = index.AccessesOf(b);
    BlockAccesses direct = AccessesOf(*b);
    EXPECT_EQ(indexed.reads.size(), direct.reads.size()) << text;
    EXPECT_EQ(indexed.writes.size(), direct.writes.size()) << text;
    // BlocksInterleaved takes a block and a later loop or block.
    for (const StmtNode* t : all) {
      if (t->kind == StmtKind::kStore || !ComesBefore(p, b, t)) continue;
      EXPECT_EQ(index.BlocksInterleaved(b, t), BlocksInterleaved(p, b, t))
          << text;
    }
  }
  for (const Buffer* buffer : AllBuffers(p)) {
    EXPECT_EQ(index.WritersOf(buffer), WritersOf(p, buffer))
        << buffer->name << "\n"
        << text;
    EXPECT_EQ(index.ReadersOf(buffer), ReadersOf(p, buffer))
        << buffer->name << "\n"
        << text;
  }
}

TEST(StmtIndex, AnswersAsTheProgramOnHandBuiltPrograms) {
  ExpectSameAsProgram(testing::PadStencilProgram(9));
  ExpectSameAsProgram(testing::ElementwiseChainProgram(3, 4));
  ExpectSameAsProgram(testing::NeighborReadProgram(5));
  ExpectSameAsProgram(testing::ScratchProgram(4, /*private_scratch=*/true));
  ExpectSameAsProgram(testing::TiledStagesProgram(3, 4, 2));
}

TEST(StmtIndex, AnswersAsTheProgramOnScheduledPrograms) {
  // Tiles, a local accumulator, a decomposed init, a padding stage computed
  // at its consumer: loops and blocks nested every way the schedules make.
  for (const char* spec :
       {"matmul:M=8,N=8,K=8", "conv2d_nchw:N=1,C=2,H=5,W=5,K=2,R=3,S=3,pad=1",
        "dense:M=4,N=6,K=3,bias=1,relu=1"}) {
    Program initial = ParseWorkloadSpec(spec).value().InitialProgram().value();
    DefaultScheduleOptions options;
    options.vector_width = 4;
    options.register_block = 2;
    auto sch =
        ReplayTrace(DefaultSchedule(initial, options).value(), initial).value();
    ExpectSameAsProgram(sch->program());
  }
  TracedSchedule sch(testing::PadStencilProgram(12));
  std::vector<LoopRV> b = sch.GetLoops(sch.GetBlock("B").value()).value();
  std::vector<LoopRV> split =
      sch.Split(b[0], {Factor(), Factor(int64_t{4})}).value();
  ASSERT_TRUE(sch.ComputeAt(sch.GetBlock("Pad").value(), split[1]).ok());
  ExpectSameAsProgram(sch.program());
}

TEST(StmtIndex, StatementsOutsideTheProgramHaveNoParent) {
  Program p = testing::TwoStageProgram(4);
  const StmtIndex index(p);
  Program other = p;
  EXPECT_EQ(index.ParentOf(other.FindBlock("B")), nullptr);
  EXPECT_EQ(index.ParentOf(p.root.get()), nullptr);
  EXPECT_FALSE(index.Contains(p.root.get(), other.FindBlock("B")));
  EXPECT_TRUE(index.Contains(p.root.get(), p.FindBlock("B")));
}

}  // namespace
}  // namespace lathe
