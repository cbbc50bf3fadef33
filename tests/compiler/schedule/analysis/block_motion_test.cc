#include "compiler/schedule/analysis/block_motion.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/schedule/primitive/compute_at.h"
#include "compiler/schedule/primitive/split.h"
#include "tests/compiler/schedule/test_programs.h"

namespace lathe {
namespace {

std::vector<std::string> Names(const std::vector<BlockNode*>& blocks) {
  std::vector<std::string> names;
  for (const BlockNode* b : blocks) names.push_back(b->name);
  return names;
}

TEST(BlockMotion, WritersAndReaders) {
  Program p = testing::ElementwiseChainProgram(2, 2);
  const Buffer* b = p.root->alloc_buffers[0].get();
  EXPECT_EQ(Names(WritersOf(p, b)), (std::vector<std::string>{"B"}));
  EXPECT_EQ(Names(ReadersOf(p, b)), (std::vector<std::string>{"C", "D"}));
}

TEST(BlockMotion, TailGuardOnlyClipsTheDomain) {
  Program p = testing::TwoStageProgram(7);
  ASSERT_TRUE(primitive::Split(&p, "i", {std::nullopt, 3}).ok());
  BlockNode* b = p.FindBlock("B");
  EXPECT_EQ(b->predicate.ToString(), "i_0 * 3 + i_1_1 < 7");
  EXPECT_TRUE(PredicateOnlyClipsDomain(p, *b));
  // Guards on the iteration variable itself, or looser than the extent.
  b->predicate = And(b->iter_vars[0].var < 9, b->iter_vars[0].var >= 0);
  EXPECT_TRUE(PredicateOnlyClipsDomain(p, *b));
  b->predicate = b->iter_vars[0].var < 6;  // skips element 6
  EXPECT_FALSE(PredicateOnlyClipsDomain(p, *b));
  b->predicate = b->iter_vars[0].var > 0;  // skips element 0
  EXPECT_FALSE(PredicateOnlyClipsDomain(p, *b));
  b->predicate = p.FindLoop("i_1_1")->var == 0;
  EXPECT_FALSE(PredicateOnlyClipsDomain(p, *b));
}

TEST(BlockMotion, BlocksInterleavedIncludesSharedLoops) {
  Program p = testing::ElementwiseChainProgram(3, 3);
  const StmtNode* b = p.FindBlock("B");
  const StmtNode* d = p.FindBlock("D");
  // Between B and D in program order: C (B's and D's own loops hold nothing
  // else).
  EXPECT_EQ(Names(BlocksInterleaved(p, b, d)), (std::vector<std::string>{"C"}));
  // C computed under D's loop: between B and that loop, C runs in every
  // iteration.
  ASSERT_TRUE(primitive::ComputeAt(&p, "C", "i_2", false).ok());
  EXPECT_EQ(Names(BlocksInterleaved(p, p.FindBlock("B"), p.FindLoop("i_2"))),
            (std::vector<std::string>{"C", "D"}));
  EXPECT_TRUE(ComesBefore(p, p.FindBlock("B"), p.FindBlock("C")));
  EXPECT_FALSE(ComesBefore(p, p.FindBlock("D"), p.FindBlock("C")));
}

TEST(BlockMotion, RemoveStmtPrunesEmptyLoopsAndSequences) {
  Program p = testing::TwoStageProgram(4);
  ASSERT_TRUE(RemoveStmt(&p, p.FindBlock("B")).ok());
  EXPECT_EQ(p.FindLoop("i"), nullptr);
  // The root's sequence of one nest became that nest.
  EXPECT_EQ(p.root->body.get(), p.FindLoop("i_1"));
  EXPECT_FALSE(RemoveStmt(&p, p.root.get()).ok());
  RemoveAllocation(&p, p.root->alloc_buffers[0].get());
  EXPECT_TRUE(p.root->alloc_buffers.empty());
}

TEST(BlockMotion, InjectiveWritesAndMatchingReads) {
  Program p = testing::MatmulProgram(2, 3, 4);
  const BlockNode& c = *p.FindBlock("C");
  auto pattern = InjectiveWriteIndices(c, *p.outputs[0]);
  ASSERT_TRUE(pattern.ok()) << pattern.status();
  ASSERT_EQ(pattern->size(), 2u);
  EXPECT_EQ((*pattern)[0].ToString(), "vi");
  EXPECT_EQ(InjectiveWriteIndices(c, *p.inputs[0]).status().code(),
            absl::StatusCode::kFailedPrecondition);
  // The instance that wrote C[x + 1, 2] is vi = x + 1, vj = 2.
  Expr x = Var("x");
  auto instance = MatchWriteIndices(*pattern, c, {x + 1, IntImm(2)});
  ASSERT_TRUE(instance.ok()) << instance.status();
  EXPECT_EQ(instance->at(c.iter_vars[0].var).ToString(), "x + 1");
  EXPECT_EQ(instance->at(c.iter_vars[1].var).ToString(), "2");
  EXPECT_FALSE(MatchWriteIndices(*pattern, c, {x}).ok());  // rank

  // A packed layout [v // 4, w, v % 4] determines v; [v // 4, w] does not.
  BlockNode packed;
  Expr v = Var("v"), w = Var("w");
  packed.iter_vars = {{v, 10, IterType::kSpatial}, {w, 3, IterType::kSpatial}};
  BufferPtr buf = MakeBuffer("P", DType::Float32(), {3, 3, 4});
  packed.body = MakeStore(buf, {FloorDiv(v, 4), w, FloorMod(v, 4)}, Expr(1.0));
  auto layout = InjectiveWriteIndices(packed, *buf);
  ASSERT_TRUE(layout.ok()) << layout.status();
  Expr j = Var("j"), k = Var("k");
  auto read =
      MatchWriteIndices(*layout, packed, {FloorDiv(j, 4), k, FloorMod(j, 4)});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->at(v).same_as(j));
  EXPECT_TRUE(read->at(w).same_as(k));
  // Two different sources of v, or another divisor, do not match.
  EXPECT_FALSE(
      MatchWriteIndices(*layout, packed, {FloorDiv(j, 4), k, FloorMod(k, 4)})
          .ok());
  EXPECT_FALSE(
      MatchWriteIndices(*layout, packed, {FloorDiv(j, 2), k, FloorMod(j, 4)})
          .ok());
  BufferPtr buf2 = MakeBuffer("Q", DType::Float32(), {3, 3});
  packed.body = MakeStore(buf2, {FloorDiv(v, 4), w}, Expr(1.0));
  auto lossy = InjectiveWriteIndices(packed, *buf2);
  ASSERT_EQ(lossy.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(lossy.status().message(),
            "its store indices [v // 4, w] do not determine its instance");
  packed.body = MakeStore(buf2, {v + 1, w}, Expr(1.0));
  EXPECT_FALSE(InjectiveWriteIndices(packed, *buf2).ok());
}

}  // namespace
}  // namespace lathe
