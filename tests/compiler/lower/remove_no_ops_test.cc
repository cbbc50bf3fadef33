// Golden structure checks of RemoveNoOps (compiler/lower/remove_no_ops.h).
#include "compiler/lower/remove_no_ops.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/lower/lower_blocks.h"
#include "compiler/schedule/schedule.h"
#include "tests/compiler/lower/lowering_test_util.h"

namespace lathe {
namespace {

using testing::Contains;

TEST(RemoveNoOps, UnitLoopsBecomeTheirBodyWithZero) {
  const std::string spec = "matmul:M=4,N=4,K=4";
  ConcreteSchedule sch(testing::InitialProgramOf(spec));
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  // i -> (1, 4): the outer loop runs once.
  ASSERT_TRUE(sch.Split(loops[0], {Factor(int64_t{1}), Factor()}).ok());
  Program p = sch.program();
  ASSERT_TRUE(LowerBlocks(&p).ok());
  ASSERT_TRUE(Contains(PrintProgram(p), "in range(1):")) << PrintProgram(p);
  ASSERT_TRUE(RemoveNoOps(&p).ok());
  std::string text = PrintProgram(p);
  EXPECT_FALSE(Contains(text, "in range(1):")) << text;
  EXPECT_TRUE(Contains(text, "0 * 4 +") || Contains(text, "C[i_1, j]")) << text;
  EXPECT_TRUE(testing::MatchesReference(spec, p).ok()) << text;
}

}  // namespace
}  // namespace lathe
