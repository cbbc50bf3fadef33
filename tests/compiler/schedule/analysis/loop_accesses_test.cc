#include "compiler/schedule/analysis/loop_accesses.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tests/compiler/schedule/test_programs.h"

namespace lathe {
namespace {

TEST(LoopAccesses, CollectsExpandedAccessesAndSkipsPrivateBuffers) {
  Program p = testing::TiledStagesProgram(3, 4, 1);
  std::vector<LoopAccess> accesses = CollectLoopAccesses(p, *p.FindLoop("i_0"));
  std::vector<std::string> text;
  for (const LoopAccess& a : accesses) {
    std::string s =
        a.block->name + (a.is_write ? " writes " : " reads ") + a.buffer->name;
    for (const Expr& e : a.indices) s += " " + e.ToString();
    text.push_back(s);
  }
  EXPECT_EQ(text, (std::vector<std::string>{
                      "B reads A i_0 * 4 + ax", "B writes B i_0 * 4 + ax",
                      "C reads B i_0 * 4 + i_1", "C reads B i_0 * 4 + i_1 + 1",
                      "C writes C i_0 * 4 + i_1"}));
  Program scratch = testing::ScratchProgram(5, /*private_scratch=*/true);
  for (const LoopAccess& a :
       CollectLoopAccesses(scratch, *scratch.FindLoop("i"))) {
    EXPECT_NE(a.buffer->name, "T");
  }
}

TEST(LoopAccesses, CollectsTheBlocksWithTheirBindings) {
  Program p = testing::TiledStagesProgram(3, 4, 1);
  LoopAccessesAndBlocks both =
      CollectLoopAccessesAndBlocks(p, *p.FindLoop("i_0"));
  EXPECT_EQ(both.accesses.size(), 5u);
  ASSERT_EQ(both.blocks.size(), 2u);
  EXPECT_EQ(both.blocks[0].block->name, "B");
  ASSERT_EQ(both.blocks[0].bindings.size(), 1u);
  EXPECT_EQ(both.blocks[0].bindings[0].ToString(), "i_0 * 4 + ax");
  EXPECT_EQ(both.blocks[1].block->name, "C");
}

TEST(LoopAccesses, AncestorsAndLoopVariables) {
  Program p = testing::TiledStagesProgram(3, 4, 1);
  const ForNode* ax = p.FindLoop("ax");
  std::vector<const StmtNode*> ancestors = AncestorsOf(p, ax);
  ASSERT_FALSE(ancestors.empty());
  EXPECT_EQ(ancestors.front(), p.root.get());
  EXPECT_EQ(ancestors.back()->kind, StmtKind::kSeq);
  std::vector<std::string> names;
  for (const Expr& v : LoopVarsIn(*p.FindLoop("i_0"))) names.push_back(v->name);
  EXPECT_EQ(names, (std::vector<std::string>{"i_0", "ax", "i_1"}));
  Program other = testing::MatmulProgram(2, 2, 2);
  EXPECT_TRUE(AncestorsOf(p, other.FindLoop("i")).empty());
}

TEST(LoopAccesses, ConflictCandidatesPairWritesWithEverything) {
  Program p = testing::TiledStagesProgram(3, 4, 1);
  std::vector<LoopAccess> accesses = CollectLoopAccesses(p, *p.FindLoop("i_0"));
  std::vector<std::string> pairs;
  absl::Status s = ForEachConflictCandidate(
      accesses, [&](const LoopAccess& x, const LoopAccess& w) {
        EXPECT_TRUE(w.is_write);
        pairs.push_back(AccessText(x) + " / " + AccessText(w));
        return absl::OkStatus();
      });
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(pairs,
            (std::vector<std::string>{"B[i_0 * 4 + ax] / B[i_0 * 4 + ax]",
                                      "B[i_0 * 4 + i_1] / B[i_0 * 4 + ax]",
                                      "B[i_0 * 4 + i_1 + 1] / B[i_0 * 4 + ax]",
                                      "C[i_0 * 4 + i_1] / C[i_0 * 4 + i_1]"}));
  EXPECT_EQ(BlockText(accesses[0]), "block \"B\"");
  LoopAccess outside = accesses[0];
  outside.block = nullptr;
  EXPECT_EQ(BlockText(outside), "the loop body");
  int calls = 0;
  absl::Status stopped = ForEachConflictCandidate(
      accesses, [&](const LoopAccess&, const LoopAccess&) {
        ++calls;
        return absl::InternalError("stop");
      });
  EXPECT_EQ(stopped.message(), "stop");
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace lathe
