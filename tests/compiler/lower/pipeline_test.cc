// Tests of the lowering pipeline (compiler/lower/pipeline.h).
#include "compiler/lower/pipeline.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/lower/lowered_form.h"
#include "compiler/schedule/schedule.h"
#include "tests/compiler/lower/lowering_test_util.h"

namespace lathe {
namespace {

using testing::Contains;

TEST(LowerPipeline, PrintsTheProgramAfterEachPassInOrder) {
  Program initial = testing::InitialProgramOf("matmul:M=4,N=4,K=4");
  std::string log;
  LowerOptions options;
  options.print_after_each = true;
  options.print_to = &log;
  absl::StatusOr<Program> lowered = LowerProgram(initial, options);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  size_t a = log.find("# after lower_blocks\n");
  size_t b = log.find("# after compact_buffers\n");
  size_t c = log.find("# after remove_no_ops\n");
  size_t d = log.find("# after simplify\n");
  ASSERT_NE(a, std::string::npos) << log;
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_LT(c, d);
  EXPECT_NE(d, std::string::npos);
  // The input is left alone.
  EXPECT_TRUE(Contains(PrintProgram(initial), "block C("));
}

TEST(LowerPipeline, TiledMatmulLowersToRegisterTileAndMatches) {
  const std::string spec = "matmul:M=16,N=32,K=8";
  ConcreteSchedule sch(testing::InitialProgramOf(spec));
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  std::vector<LoopRV> i =
      sch.Split(loops[0], {Factor(), Factor(int64_t{4})}).value();
  std::vector<LoopRV> j =
      sch.Split(loops[1], {Factor(), Factor(int64_t{16})}).value();
  ASSERT_TRUE(sch.Reorder({i[0], j[0], loops[2], i[1], j[1]}).ok());
  ASSERT_TRUE(sch.Vectorize(j[1]).ok());
  BlockRV write_back = sch.CacheWrite(c, 0, "local").value();
  ASSERT_TRUE(sch.ReverseComputeAt(write_back, j[0]).ok());
  LowerReport report;
  absl::StatusOr<Program> lowered = LowerProgram(sch.program(), {}, &report);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  std::string text = PrintProgram(*lowered);
  EXPECT_TRUE(Contains(text, "alloc C_local: float32[4, 16] local")) << text;
  EXPECT_TRUE(Contains(text, "vectorized")) << text;
  EXPECT_TRUE(VerifyLowered(*lowered).ok());
  EXPECT_TRUE(testing::MatchesReference(spec, *lowered).ok()) << text;
}

}  // namespace
}  // namespace lathe
