#include "compiler/schedule/primitive/annotate.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/schedule/traced_schedule.h"
#include "tests/compiler/schedule/same_result.h"
#include "tests/compiler/schedule/test_programs.h"
#include "tests/compiler/schedule/trace_round_trip.h"

namespace lathe {
namespace {

TEST(Annotate, SetsAndReplacesLoopAndBlockAnnotations) {
  Program initial = testing::MatmulProgram(4, 5, 6);
  TracedSchedule sch(initial);
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  ASSERT_TRUE(
      sch.AnnotateBlock(c, "pragma_auto_unroll_max_step", int64_t{64}).ok());
  ASSERT_TRUE(sch.AnnotateBlock(c, "pragma_unroll_explicit", int64_t{1}).ok());
  ASSERT_TRUE(
      sch.AnnotateLoop(loops[0], "pragma_auto_unroll_max_step", int64_t{16})
          .ok());
  ASSERT_TRUE(sch.AnnotateLoop(loops[1], "note", std::string("hello")).ok());
  ASSERT_TRUE(sch.AnnotateLoop(loops[1], "note", std::string("again")).ok());
  const Program& p = sch.program();
  const BlockNode* block = p.FindBlock("C");
  EXPECT_EQ(
      std::get<int64_t>(block->annotations.at("pragma_auto_unroll_max_step")),
      64);
  EXPECT_EQ(std::get<int64_t>(block->annotations.at("pragma_unroll_explicit")),
            1);
  EXPECT_EQ(std::get<int64_t>(
                p.FindLoop("i")->annotations.at("pragma_auto_unroll_max_step")),
            16);
  EXPECT_EQ(std::get<std::string>(p.FindLoop("j")->annotations.at("note")),
            "again");
  EXPECT_EQ(p.FindLoop("j")->annotations.size(), 1u);
  // Annotations are part of the program's identity, not of what it computes.
  EXPECT_FALSE(StructuralEqual(p, initial));
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same;
  absl::Status trace = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trace.ok()) << trace;
}

TEST(Annotate, RejectsEmptyKeysAndUnknownNames) {
  TracedSchedule sch(testing::MatmulProgram(4, 5, 6));
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  std::string before = PrintProgram(sch.program());
  absl::Status loop_key = sch.AnnotateLoop(loops[0], "", int64_t{1});
  EXPECT_EQ(loop_key.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(loop_key.message(), "annotate_loop: empty key for loop \"i\"");
  absl::Status block_key = sch.AnnotateBlock(c, "", std::string("x"));
  EXPECT_EQ(block_key.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(block_key.message(), "annotate_block: empty key for block \"C\"");
  EXPECT_EQ(PrintProgram(sch.program()), before);
  EXPECT_EQ(sch.trace().instructions.size(), 2u);

  Program p = testing::MatmulProgram(2, 2, 2);
  absl::Status loop = primitive::AnnotateLoop(&p, "x", "k", int64_t{1});
  EXPECT_EQ(loop.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(loop.message(), "annotate_loop: no loop named \"x\"");
  absl::Status block = primitive::AnnotateBlock(&p, "D", "k", int64_t{1});
  EXPECT_EQ(block.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(block.message(), "annotate_block: no block named \"D\"");
}

}  // namespace
}  // namespace lathe
