#include <gtest/gtest.h>

#include <tuple>

#include "compiler/ir/printer.h"
#include "compiler/schedule/primitive/compute_at.h"
#include "compiler/schedule/traced_schedule.h"
#include "tests/compiler/schedule/same_result.h"
#include "tests/compiler/schedule/test_programs.h"
#include "tests/compiler/schedule/trace_round_trip.h"

namespace lathe {
namespace {

bool Contains(absl::string_view text, absl::string_view part) {
  return text.find(part) != absl::string_view::npos;
}

std::vector<std::string> LoopNames(TracedSchedule& sch,
                                   const std::string& block) {
  std::vector<std::string> names;
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock(block).value()).value();
  for (LoopRV l : loops) names.push_back(sch.LoopName(l).value());
  return names;
}

// Dense + bias + relu with T_bias inlined into Y and the matmul tiled
// i_0, j_0, i_1, j_1, k by (ti, tj). Returns the tile loops.
std::vector<LoopRV> TileDense(TracedSchedule& sch, int64_t ti, int64_t tj) {
  EXPECT_TRUE(sch.ComputeInline(sch.GetBlock("T_bias").value()).ok());
  std::vector<LoopRV> loops =
      sch.GetLoops(sch.GetBlock("T_dense").value()).value();
  std::vector<LoopRV> i = sch.Split(loops[0], {Factor(), Factor(ti)}).value();
  std::vector<LoopRV> j = sch.Split(loops[1], {Factor(), Factor(tj)}).value();
  EXPECT_TRUE(sch.Reorder({i[0], j[0], i[1], j[1], loops[2]}).ok());
  return {i[0], j[0], i[1], j[1], loops[2]};
}

TEST(ReverseComputeAt, ReluEpilogueUnderMatmulTile) {
  for (auto [m, n, k] :
       {std::tuple<int64_t, int64_t, int64_t>{8, 6, 4}, {11, 7, 3}}) {
    Program initial = testing::DenseBiasReluProgram(m, n, k);
    TracedSchedule sch(initial);
    std::vector<LoopRV> tile = TileDense(sch, 4, 3);
    absl::Status s = sch.ReverseComputeAt(sch.GetBlock("Y").value(), tile[1]);
    ASSERT_TRUE(s.ok()) << s << "\n" << PrintProgram(sch.program());
    const Program& p = sch.program();
    std::vector<std::string> y_loops = LoopNames(sch, "Y");
    ASSERT_EQ(y_loops.size(), 4u);
    EXPECT_EQ(y_loops[0], sch.LoopName(tile[0]).value());
    EXPECT_EQ(y_loops[1], sch.LoopName(tile[1]).value());
    EXPECT_EQ(p.FindLoop(y_loops[2])->extent, 4);
    EXPECT_EQ(p.FindLoop(y_loops[3])->extent, 3);
    const BlockNode* y = p.FindBlock("Y");
    EXPECT_EQ(y->iter_values[0].ToString(), "i_0 * 4 + ax0");
    EXPECT_EQ(y->iter_values[1].ToString(), "j_0 * 3 + ax1");
    // The epilogue is the last statement of the tile loop's body.
    const auto* body = p.FindLoop(y_loops[1])->body->as<SeqNode>();
    ASSERT_NE(body, nullptr);
    EXPECT_EQ(body->stmts.back().get(), p.FindLoop("ax0"));
    if (m % 4 != 0) {
      EXPECT_EQ(y->predicate.ToString(),
                "i_0 * 4 + ax0 < 11 && j_0 * 3 + ax1 < 7");
    }
    absl::Status same = testing::CheckSameResult(initial, p);
    EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
    absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
    EXPECT_TRUE(trip.ok()) << trip;
  }
}

TEST(ReverseComputeAt, EpilogueAtInnerTileLoop) {
  Program initial = testing::DenseBiasReluProgram(9, 5, 2);
  TracedSchedule sch(initial);
  std::vector<LoopRV> tile = TileDense(sch, 2, 5);
  // Move k above i_1 so that the reduction is complete under i_1.
  ASSERT_TRUE(sch.Reorder({tile[4], tile[2]}).ok());
  absl::Status s = sch.ReverseComputeAt(sch.GetBlock("Y").value(), tile[2]);
  ASSERT_FALSE(s.ok());  // the reduction over k is above i_1 now
  EXPECT_TRUE(Contains(s.message(), "is not complete within one iteration"))
      << s;
  ASSERT_TRUE(sch.Reorder({tile[2], tile[4]}).ok());
  s = sch.ReverseComputeAt(sch.GetBlock("Y").value(), tile[2]);
  ASSERT_TRUE(s.ok()) << s << "\n" << PrintProgram(sch.program());
  EXPECT_EQ(LoopNames(sch, "Y").size(), 4u);  // i_0, j_0, i_1, ax0
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
  absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trip.ok()) << trip;
}

TEST(ReverseComputeAt, WriteBackOfCacheWriteUnderTile) {
  // The GEMM recipe: accumulate in a local cache, write back per tile.
  Program initial = testing::MatmulProgram(10, 6, 5);
  TracedSchedule sch(initial);
  BlockRV c = sch.GetBlock("C").value();
  auto write_back = sch.CacheWrite(c, 0, "local");
  ASSERT_TRUE(write_back.ok()) << write_back.status();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  std::vector<LoopRV> i =
      sch.Split(loops[0], {Factor(), Factor(int64_t{4})}).value();
  ASSERT_TRUE(sch.Reorder({i[0], loops[1], i[1]}).ok());
  absl::Status s = sch.ReverseComputeAt(*write_back, loops[1]);
  ASSERT_TRUE(s.ok()) << s << "\n" << PrintProgram(sch.program());
  std::vector<std::string> wb_loops =
      LoopNames(sch, sch.BlockName(*write_back).value());
  ASSERT_EQ(wb_loops.size(), 3u);  // i_0, j, ax0 (the column is a unit loop)
  EXPECT_EQ(sch.program().FindLoop(wb_loops[2])->extent, 4);
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
  absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trip.ok()) << trip;
}

TEST(ReverseComputeAt, PackedWriteBackUnderTile) {
  // The tile accumulates in a cache laid out as [N / 4][M][4]; the write-back
  // reads it through the same layout and follows the tile.
  Program initial = testing::MatmulProgram(9, 10, 3);
  TracedSchedule sch(initial);
  BlockRV c = sch.GetBlock("C").value();
  auto write_back = sch.CacheWrite(c, 0, "local", Layout{{1, 4}, {1, 0, 2}});
  ASSERT_TRUE(write_back.ok()) << write_back.status();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  std::vector<LoopRV> i =
      sch.Split(loops[0], {Factor(), Factor(int64_t{2})}).value();
  std::vector<LoopRV> j =
      sch.Split(loops[1], {Factor(), Factor(int64_t{4})}).value();
  ASSERT_TRUE(sch.Reorder({i[0], j[0], i[1], j[1]}).ok());
  absl::Status s = sch.ReverseComputeAt(*write_back, j[0]);
  ASSERT_TRUE(s.ok()) << s << "\n" << PrintProgram(sch.program());
  std::string name = sch.BlockName(*write_back).value();
  std::vector<std::string> wb_loops = LoopNames(sch, name);
  ASSERT_EQ(wb_loops.size(), 4u);
  EXPECT_EQ(sch.program().FindLoop(wb_loops[2])->extent, 2);
  EXPECT_EQ(sch.program().FindLoop(wb_loops[3])->extent, 4);
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
  absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trip.ok()) << trip;
}

TEST(ReverseComputeAt, UnitLoopsArePreservedOnRequest) {
  for (bool keep : {false, true}) {
    Program initial = testing::TwoStageProgram(7);
    TracedSchedule sch(initial);
    std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("B").value()).value();
    absl::Status s =
        sch.ReverseComputeAt(sch.GetBlock("C").value(), loops[0], keep);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(LoopNames(sch, "C").size(), keep ? 2u : 1u);
    EXPECT_EQ(sch.program().FindBlock("C")->iter_values[0].ToString(),
              keep ? "i + ax0" : "i");
    absl::Status same = testing::CheckSameResult(initial, sch.program());
    EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
    absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
    EXPECT_TRUE(trip.ok()) << trip;
  }
}

TEST(ReverseComputeAt, RejectsReductionIncompleteInOneIteration) {
  Program initial = testing::DenseBiasReluProgram(4, 4, 4);
  TracedSchedule sch(initial);
  ASSERT_TRUE(sch.ComputeInline(sch.GetBlock("T_bias").value()).ok());
  std::string before = PrintProgram(sch.program());
  std::vector<LoopRV> loops =
      sch.GetLoops(sch.GetBlock("T_dense").value()).value();
  absl::Status s =
      sch.ReverseComputeAt(sch.GetBlock("Y").value(), loops[2]);  // k
  ASSERT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "reverse_compute_at: block \"Y\" cannot be computed at loop \"k\": "
            "producer "
            "\"T_dense\": its reduction over vk is not complete within one "
            "iteration");
  EXPECT_EQ(PrintProgram(sch.program()), before);
}

TEST(ReverseComputeAt, RejectsShiftedReadsAndLoopsWithoutProducer) {
  Program initial = testing::PadStencilProgram(6);
  TracedSchedule sch(initial);
  std::string before = PrintProgram(sch.program());
  std::vector<LoopRV> pad_loops =
      sch.GetLoops(sch.GetBlock("Pad").value()).value();
  absl::Status shifted =
      sch.ReverseComputeAt(sch.GetBlock("B").value(), pad_loops[0]);
  ASSERT_EQ(shifted.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(
      shifted.message(),
      "it reads Pad at [vi_1 + 1], not where \"Pad\" writes with its own "
      "iteration variables"))
      << shifted;
  Program two = testing::ElementwiseChainProgram(3, 3);
  TracedSchedule sch2(two);
  std::vector<LoopRV> b_loops =
      sch2.GetLoops(sch2.GetBlock("B").value()).value();
  // D reads B and C; C is not under B's loop and runs in between.
  absl::Status between =
      sch2.ReverseComputeAt(sch2.GetBlock("D").value(), b_loops[0]);
  ASSERT_EQ(between.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(
      Contains(between.message(),
               "block \"C\" writes C, which the block reads, in between"))
      << between;
  std::vector<LoopRV> c_loops =
      sch2.GetLoops(sch2.GetBlock("C").value()).value();
  absl::Status none =
      sch2.ReverseComputeAt(sch2.GetBlock("C").value(), c_loops[0]);
  ASSERT_EQ(none.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(
      Contains(none.message(), "no block under the loop writes what it reads"))
      << none;
  absl::Status early =
      sch2.ReverseComputeAt(sch2.GetBlock("B").value(), c_loops[0]);
  EXPECT_EQ(early.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(early.message(), "the block runs before the loop"))
      << early;
  EXPECT_EQ(PrintProgram(sch.program()), before);
}

TEST(ReverseComputeAt, RejectsReductionConsumer) {
  Program initial = testing::MatmulProgram(4, 4, 4);
  TracedSchedule sch(initial);
  auto write_back = sch.CacheRead(sch.GetBlock("C").value(), 0, "local");
  ASSERT_TRUE(write_back.ok()) << write_back.status();
  std::vector<LoopRV> loops = sch.GetLoops(*write_back).value();
  absl::Status s = sch.ReverseComputeAt(sch.GetBlock("C").value(), loops[0]);
  ASSERT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(s.message(), "it is a reduction")) << s;
}

}  // namespace
}  // namespace lathe
