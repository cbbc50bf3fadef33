// Golden structure checks of LowerBlocks (compiler/lower/lower_blocks.h).
#include "compiler/lower/lower_blocks.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/lower/lowered_form.h"
#include "compiler/schedule/schedule.h"
#include "tests/compiler/lower/lowering_test_util.h"

namespace lathe {
namespace {

using testing::Contains;

TEST(LowerBlocks, ReductionInitBecomesGuardOnReduceBindings) {
  const std::string spec = "matmul:M=8,N=6,K=4";
  Program p = testing::InitialProgramOf(spec);
  ASSERT_TRUE(LowerBlocks(&p).ok());
  std::string text = PrintProgram(p);
  EXPECT_TRUE(Contains(text, "if k == 0:\n")) << text;
  EXPECT_TRUE(Contains(text, "C[i, j] = 0.0f")) << text;
  EXPECT_TRUE(Contains(text, "C[i, j] = C[i, j] + A[i, k] * B[k, j]")) << text;
  EXPECT_FALSE(Contains(text, "block C")) << text;
  EXPECT_FALSE(Contains(text, "reads")) << text;
  EXPECT_TRUE(VerifyLowered(p).ok()) << text;
  EXPECT_TRUE(testing::MatchesReference(spec, p).ok()) << text;
}

TEST(LowerBlocks, PredicateOfNonDivisibleSplitBecomesIf) {
  const std::string spec = "matmul:M=7,N=5,K=3";
  ConcreteSchedule sch(testing::InitialProgramOf(spec));
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  ASSERT_TRUE(sch.Split(loops[0], {Factor(), Factor(int64_t{4})}).ok());
  Program p = sch.program();
  ASSERT_TRUE(LowerBlocks(&p).ok());
  std::string text = PrintProgram(p);
  EXPECT_TRUE(Contains(text, "< 7:\n")) << text;
  // The predicate guards the init as well: it is the outer If.
  EXPECT_LT(text.find("< 7:"), text.find("== 0:")) << text;
  EXPECT_TRUE(VerifyLowered(p).ok()) << text;
  EXPECT_TRUE(testing::MatchesReference(spec, p).ok()) << text;
}

TEST(LowerBlocks, DecomposedReductionKeepsInitBlockAsPlainStores) {
  const std::string spec = "matmul:M=4,N=4,K=5";
  ConcreteSchedule sch(testing::InitialProgramOf(spec));
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  ASSERT_TRUE(sch.DecomposeReduction(c, loops[2]).ok());
  Program p = sch.program();
  ASSERT_TRUE(LowerBlocks(&p).ok());
  std::string text = PrintProgram(p);
  EXPECT_FALSE(Contains(text, "== 0")) << text;  // no guard: no init left
  EXPECT_TRUE(VerifyLowered(p).ok()) << text;
  EXPECT_TRUE(testing::MatchesReference(spec, p).ok()) << text;
}

// A block that allocates: its allocation becomes a scope block named after it.
TEST(LowerBlocks, InnerAllocationsBecomeAllocationScopes) {
  Program p;
  p.name = "twice";
  BufferPtr a = MakeBuffer("A", DType::Float32(), {4});
  BufferPtr out = MakeBuffer("Out", DType::Float32(), {4});
  BufferPtr t = MakeBuffer("T", DType::Float32(), {1}, BufferScope::kLocal);
  p.inputs = {a};
  p.outputs = {out};
  Expr i = Var("i");
  Expr vi = Var("vi");
  auto block = std::make_unique<BlockNode>();
  block->name = "B";
  block->iter_vars = {IterVar{vi, 4, IterType::kSpatial}};
  block->iter_values = {i};
  block->alloc_buffers = {t};
  std::vector<StmtPtr> body;
  body.push_back(MakeStore(t, {IntImm(0)}, Load(a, {vi})));
  body.push_back(MakeStore(out, {vi}, Load(t, {IntImm(0)}) * Expr(2.0)));
  block->body = MakeSeq(std::move(body));
  p.root = std::make_unique<BlockNode>();
  p.root->name = "root";
  p.root->body = MakeFor(i, 4, std::move(block));

  ASSERT_TRUE(LowerBlocks(&p).ok());
  std::string text = PrintProgram(p);
  EXPECT_TRUE(Contains(text,
                       "  for i in range(4):\n    block B():\n      alloc T: "
                       "float32[1] local\n"))
      << text;
  EXPECT_TRUE(Contains(text, "Out[i] = T[0] * 2.0f")) << text;
  EXPECT_TRUE(VerifyLowered(p).ok()) << text;
}

}  // namespace
}  // namespace lathe
