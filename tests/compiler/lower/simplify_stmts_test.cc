// Golden structure checks of SimplifyStmts (compiler/lower/simplify_stmts.h).
#include "compiler/lower/simplify_stmts.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/lower/lower_blocks.h"
#include "compiler/schedule/schedule.h"
#include "tests/compiler/lower/lowering_test_util.h"

namespace lathe {
namespace {

using testing::Contains;

Program OneLoop(int64_t extent,
                StmtPtr (*make_body)(const Expr& i, const BufferPtr& out)) {
  Program p;
  p.name = "one_loop";
  BufferPtr out = MakeBuffer("Out", DType::Index(), {extent});
  p.outputs = {out};
  Expr i = Var("i");
  p.root = std::make_unique<BlockNode>();
  p.root->name = "root";
  p.root->body = MakeFor(i, extent, make_body(i, out));
  return p;
}

TEST(SimplifyStmts, RemovesIfsDecidedByLoopRanges) {
  Program p = OneLoop(8, [](const Expr& i, const BufferPtr& out) {
    std::vector<StmtPtr> stmts;
    stmts.push_back(MakeIf(i < 8, MakeStore(out, {i}, (i * 4 + 2) / 4)));
    stmts.push_back(MakeIf(i >= 8, MakeStore(out, {i}, IntImm(7))));
    stmts.push_back(MakeIf(i < 3, MakeStore(out, {i}, IntImm(1))));
    return MakeSeq(std::move(stmts));
  });
  ASSERT_TRUE(SimplifyStmts(&p).ok());
  std::string text = PrintProgram(p);
  EXPECT_FALSE(Contains(text, "i < 8")) << text;  // provably true: removed
  EXPECT_FALSE(Contains(text, "= 7")) << text;    // provably false: gone
  EXPECT_TRUE(Contains(text, "Out[i] = i\n")) << text;  // (i*4+2)//4 == i
  EXPECT_TRUE(Contains(text, "if i < 3:")) << text;     // undecided: kept
}

TEST(SimplifyStmts, DivisibleSplitLeavesNoGuardAndPlainIndices) {
  const std::string spec = "matmul:M=8,N=8,K=8";
  ConcreteSchedule sch(testing::InitialProgramOf(spec));
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  std::vector<LoopRV> f =
      sch.Split(loops[0], {Factor(), Factor(int64_t{4})}).value();
  LoopRV fused = sch.Fuse({f[1], loops[1]}).value();
  (void)fused;
  Program p = sch.program();
  ASSERT_TRUE(LowerBlocks(&p).ok());
  ASSERT_TRUE(SimplifyStmts(&p).ok());
  std::string text = PrintProgram(p);
  EXPECT_TRUE(Contains(text, "if k == 0:")) << text;  // the init guard stays
  EXPECT_TRUE(testing::MatchesReference(spec, p).ok()) << text;
}

}  // namespace
}  // namespace lathe
