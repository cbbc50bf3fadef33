#include "compiler/schedule/primitive/compute_at.h"

#include <gtest/gtest.h>

#include <tuple>

#include "base/status_macros.h"
#include "compiler/ir/printer.h"
#include "compiler/schedule/replay.h"
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
  for (LoopRV l : loops) {
    names.push_back(sch.LoopName(l).value());
  }
  return names;
}

// The stencil B split by 4: loops i_1_0 (ceil(n / 4)), i_1_1 (4).
std::vector<LoopRV> SplitStencil(TracedSchedule& sch) {
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("B").value()).value();
  return sch.Split(loops[0], {Factor(), Factor(int64_t{4})}).value();
}

// A matmul tiled for a GPU: blocks of 32x32 outputs (blockIdx.x over the
// 2x2 tiles, fused), 16x16 threads of 2x2 outputs, K in chunks of 8; the
// tiles of A and B cached in `scope` at the K chunk, under the bound loops.
absl::Status CacheKChunkUnderBoundLoops(TracedSchedule& sch,
                                        const std::string& scope) {
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  std::vector<LoopRV> i =
      sch.Split(loops[0], {Factor(), Factor(int64_t{16}), Factor(int64_t{2})})
          .value();
  std::vector<LoopRV> j =
      sch.Split(loops[1], {Factor(), Factor(int64_t{16}), Factor(int64_t{2})})
          .value();
  std::vector<LoopRV> k =
      sch.Split(loops[2], {Factor(), Factor(int64_t{8})}).value();
  LATHE_RETURN_IF_ERROR(
      sch.Reorder({i[0], j[0], k[0], i[1], j[1], k[1], i[2], j[2]}));
  LATHE_ASSIGN_OR_RETURN(LoopRV block_loop, sch.Fuse({i[0], j[0]}));
  LATHE_ASSIGN_OR_RETURN(LoopRV thread_loop, sch.Fuse({i[1], j[1]}));
  LATHE_RETURN_IF_ERROR(sch.Bind(block_loop, "blockIdx.x"));
  LATHE_RETURN_IF_ERROR(sch.Bind(thread_loop, "threadIdx.x"));
  for (int64_t input : {0, 1}) {
    LATHE_ASSIGN_OR_RETURN(BlockRV cache, sch.CacheRead(c, input, scope));
    LATHE_RETURN_IF_ERROR(sch.ComputeAt(cache, k[0]));
  }
  return absl::OkStatus();
}

TEST(ComputeAt, SharedCacheUnderABlockLoopIsEachBlocksOwn) {
  // Blocks in one row of tiles read the same rows of A: a root buffer of
  // global scope would be one buffer they all overwrite; a shared one is
  // allocated inside the K chunk, so each block has its own.
  Program initial = testing::MatmulProgram(64, 64, 32);
  TracedSchedule sch(initial);
  absl::Status s = CacheKChunkUnderBoundLoops(sch, "shared");
  ASSERT_TRUE(s.ok()) << s;
  const Program& p = sch.program();
  EXPECT_EQ(LoopNames(sch, "A_shared"),
            (std::vector<std::string>{"i_0_j_0_fused", "k_0", "ax0", "ax1"}));
  EXPECT_EQ(p.FindLoop("ax0")->extent, 32);
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
  absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trip.ok()) << trip;

  TracedSchedule global(initial);
  absl::Status refused = CacheKChunkUnderBoundLoops(global, "global");
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(Contains(refused.message(), "would stop being data-parallel"))
      << refused;
}

TEST(ComputeAt, PaddingAtSplitStencilLoopCoversFactorPlusTwo) {
  Program initial = testing::PadStencilProgram(13);  // prime: a tail of 1
  TracedSchedule sch(initial);
  std::vector<LoopRV> split = SplitStencil(sch);
  absl::Status s = sch.ComputeAt(sch.GetBlock("Pad").value(), split[0]);
  ASSERT_TRUE(s.ok()) << s;
  const Program& p = sch.program();
  EXPECT_EQ(LoopNames(sch, "Pad"), (std::vector<std::string>{"i_1_0", "ax0"}));
  EXPECT_EQ(p.FindLoop("ax0")->extent, 6);  // 4 + 2 halo
  const BlockNode* pad = p.FindBlock("Pad");
  EXPECT_EQ(pad->iter_values[0].ToString(), "i_1_0 * 4 + ax0");
  // The last tile reads Pad[12..17], clipped to the 15 elements of Pad.
  EXPECT_EQ(pad->predicate.ToString(), "i_1_0 * 4 + ax0 < 15");
  EXPECT_EQ(p.FindLoop("i"), nullptr);  // the old nest is gone
  // Pad comes first in the loop body, before the consumer's loop.
  const auto* body = p.FindLoop("i_1_0")->body->as<SeqNode>();
  ASSERT_NE(body, nullptr);
  ASSERT_EQ(body->stmts.size(), 2u);
  EXPECT_EQ(body->stmts[1].get(), p.FindLoop("i_1_1"));
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
  absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trip.ok()) << trip;
}

TEST(ComputeAt, PaddingAtInnerLoopComputesThreeElements) {
  Program initial = testing::PadStencilProgram(11);
  TracedSchedule sch(initial);
  std::vector<LoopRV> split = SplitStencil(sch);
  absl::Status s = sch.ComputeAt(sch.GetBlock("Pad").value(), split[1]);
  ASSERT_TRUE(s.ok()) << s;
  const Program& p = sch.program();
  EXPECT_EQ(LoopNames(sch, "Pad"),
            (std::vector<std::string>{"i_1_0", "i_1_1", "ax0"}));
  EXPECT_EQ(p.FindLoop("ax0")->extent, 3);
  EXPECT_EQ(p.FindBlock("Pad")->iter_values[0].ToString(),
            "i_1_0 * 4 + i_1_1 + ax0");
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
  absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trip.ok()) << trip;
}

TEST(ComputeAt, CorrectForManySizesAndBothLevels) {
  for (int64_t n : {1, 2, 3, 4, 5, 8, 13, 17}) {
    for (int level : {0, 1}) {
      for (bool keep : {false, true}) {
        Program initial = testing::PadStencilProgram(n);
        TracedSchedule sch(initial);
        std::vector<LoopRV> split = SplitStencil(sch);
        absl::Status s =
            sch.ComputeAt(sch.GetBlock("Pad").value(), split[level], keep);
        ASSERT_TRUE(s.ok()) << s << " n=" << n;
        absl::Status same = testing::CheckSameResult(initial, sch.program(), n);
        EXPECT_TRUE(same.ok()) << same << " n=" << n << "\n"
                               << PrintProgram(sch.program());
      }
    }
  }
}

TEST(ComputeAt, UnitLoopsAreDroppedUnlessPreserved) {
  for (bool keep : {false, true}) {
    Program initial = testing::TwoStageProgram(9);
    TracedSchedule sch(initial);
    std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
    ASSERT_TRUE(sch.ComputeAt(sch.GetBlock("B").value(), loops[0], keep).ok());
    const Program& p = sch.program();
    if (keep) {
      EXPECT_EQ(LoopNames(sch, "B"), (std::vector<std::string>{"i_1", "ax0"}));
      EXPECT_EQ(p.FindLoop("ax0")->extent, 1);
      EXPECT_EQ(p.FindBlock("B")->iter_values[0].ToString(), "i_1 + ax0");
    } else {
      EXPECT_EQ(LoopNames(sch, "B"), (std::vector<std::string>{"i_1"}));
      EXPECT_EQ(p.FindBlock("B")->iter_values[0].ToString(), "i_1");
    }
    EXPECT_EQ(p.FindBlock("B")->predicate.ToString(), "true");
    absl::Status same = testing::CheckSameResult(initial, p);
    EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
    absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
    EXPECT_TRUE(trip.ok()) << trip;
  }
}

// Dense + bias + relu: T_bias inlined into Y, Y tiled, the matmul computed
// per tile of Y.
TEST(ComputeAt, MatmulAtTileOfInlinedEpilogue) {
  for (auto [m, n, k] :
       {std::tuple<int64_t, int64_t, int64_t>{8, 6, 5}, {10, 7, 3}}) {
    Program initial = testing::DenseBiasReluProgram(m, n, k);
    TracedSchedule sch(initial);
    ASSERT_TRUE(sch.ComputeInline(sch.GetBlock("T_bias").value()).ok());
    BlockRV y = sch.GetBlock("Y").value();
    std::vector<LoopRV> loops = sch.GetLoops(y).value();
    std::vector<LoopRV> i =
        sch.Split(loops[0], {Factor(), Factor(int64_t{4})}).value();
    std::vector<LoopRV> j =
        sch.Split(loops[1], {Factor(), Factor(int64_t{3})}).value();
    ASSERT_TRUE(sch.Reorder({i[0], j[0], i[1], j[1]}).ok());
    absl::Status s = sch.ComputeAt(sch.GetBlock("T_dense").value(), j[0]);
    ASSERT_TRUE(s.ok()) << s << "\n" << PrintProgram(sch.program());
    const Program& p = sch.program();
    std::vector<std::string> dense_loops = LoopNames(sch, "T_dense");
    ASSERT_EQ(dense_loops.size(), 5u);
    EXPECT_EQ(p.FindLoop(dense_loops[2])->extent, 4);
    EXPECT_EQ(p.FindLoop(dense_loops[3])->extent, 3);
    EXPECT_EQ(p.FindLoop(dense_loops[4])->extent, k);  // the whole reduction
    EXPECT_TRUE(p.FindBlock("T_dense")->init != nullptr);
    absl::Status same = testing::CheckSameResult(initial, p);
    EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
    absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
    EXPECT_TRUE(trip.ok()) << trip;
  }
}

TEST(ComputeAt, PackedPanelAtTheColumnTile) {
  // B[K, N] packed as [N / 16][K][16], each panel packed under the loop over
  // column tiles: the copy's columns follow the tile, the last one clipped.
  Program initial = testing::MatmulProgram(3, 40, 5);
  TracedSchedule sch(initial);
  BlockRV c = sch.GetBlock("C").value();
  auto packed = sch.CacheRead(c, 1, "global", Layout{{1, 16}, {1, 0, 2}});
  ASSERT_TRUE(packed.ok()) << packed.status();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  std::vector<LoopRV> j =
      sch.Split(loops[1], {Factor(), Factor(int64_t{16})}).value();
  ASSERT_TRUE(sch.Reorder({j[0], loops[0]}).ok());
  absl::Status s = sch.ComputeAt(*packed, j[0]);
  ASSERT_TRUE(s.ok()) << s << "\n" << PrintProgram(sch.program());
  const Program& p = sch.program();
  const BlockNode* copy = p.FindBlock("B_global");
  std::vector<std::string> copy_loops = LoopNames(sch, "B_global");
  ASSERT_EQ(copy_loops.size(), 3u);
  EXPECT_EQ(p.FindLoop(copy_loops[1])->extent, 5);   // all of K
  EXPECT_EQ(p.FindLoop(copy_loops[2])->extent, 16);  // one panel
  EXPECT_EQ(copy->iter_values[1].ToString(), "j_0 * 16 + ax1");
  EXPECT_EQ(copy->predicate.ToString(), "j_0 * 16 + ax1 < 40");
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
  absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trip.ok()) << trip;
  // Every loop above C can hold the copy.
  EXPECT_EQ(primitive::ComputeLocations(p, "B_global"),
            (std::vector<std::string>{"j_0", "i", "j_1", "k"}));
}

TEST(ComputeAt, TwoConsumersUnderTheLoopShareOneRegion) {
  // B is read by C and D; with C computed at D's inner loop, both are under
  // D's loops and B can follow them.
  Program initial = testing::ElementwiseChainProgram(5, 7);
  TracedSchedule sch(initial);
  std::vector<LoopRV> d_loops = sch.GetLoops(sch.GetBlock("D").value()).value();
  ASSERT_TRUE(sch.ComputeAt(sch.GetBlock("C").value(), d_loops[1]).ok());
  absl::Status s = sch.ComputeAt(sch.GetBlock("B").value(), d_loops[0]);
  ASSERT_TRUE(s.ok()) << s << "\n" << PrintProgram(sch.program());
  const Program& p = sch.program();
  std::vector<std::string> b_loops = LoopNames(sch, "B");
  ASSERT_EQ(b_loops.size(), 2u);
  EXPECT_EQ(p.FindLoop(b_loops[1])->extent, 7);  // one row
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
  absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trip.ok()) << trip;
}

TEST(ComputeAt, MovesAgainInwardAndOutward) {
  Program initial = testing::PadStencilProgram(10);
  TracedSchedule sch(initial);
  std::vector<LoopRV> split = SplitStencil(sch);
  BlockRV pad = sch.GetBlock("Pad").value();
  ASSERT_TRUE(sch.ComputeAt(pad, split[0]).ok());
  absl::Status inward = sch.ComputeAt(pad, split[1]);
  ASSERT_TRUE(inward.ok()) << inward;
  EXPECT_EQ(LoopNames(sch, "Pad").size(), 3u);
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
  absl::Status outward = sch.ComputeAt(pad, split[0]);
  ASSERT_TRUE(outward.ok()) << outward;
  EXPECT_EQ(LoopNames(sch, "Pad").size(), 2u);
  same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
  absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trip.ok()) << trip;
}

TEST(ComputeAt, KeepsParallelLoopsDataParallel) {
  // Under a parallel loop over tiles of the stencil, neighbouring tiles would
  // both write the halo elements of Pad.
  Program initial = testing::PadStencilProgram(12);
  TracedSchedule sch(initial);
  std::vector<LoopRV> split = SplitStencil(sch);
  ASSERT_TRUE(sch.Parallel(split[0]).ok());
  std::string before = PrintProgram(sch.program());
  absl::Status halo = sch.ComputeAt(sch.GetBlock("Pad").value(), split[0]);
  ASSERT_EQ(halo.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(
      Contains(halo.message(), "loop \"i_1_0\" would stop being data-parallel"))
      << halo;
  EXPECT_EQ(PrintProgram(sch.program()), before);
  // Deeper in the tile, the last halo still overlaps the next tile's first.
  EXPECT_FALSE(sch.ComputeAt(sch.GetBlock("Pad").value(), split[1]).ok());
  // Disjoint matmul tiles are fine.
  Program dense = testing::DenseBiasReluProgram(8, 6, 3);
  TracedSchedule sch2(dense);
  ASSERT_TRUE(sch2.ComputeInline(sch2.GetBlock("T_bias").value()).ok());
  std::vector<LoopRV> loops = sch2.GetLoops(sch2.GetBlock("Y").value()).value();
  std::vector<LoopRV> i =
      sch2.Split(loops[0], {Factor(), Factor(int64_t{4})}).value();
  ASSERT_TRUE(sch2.Parallel(i[0]).ok());
  absl::Status tiles = sch2.ComputeAt(sch2.GetBlock("T_dense").value(), i[0]);
  ASSERT_TRUE(tiles.ok()) << tiles;
  absl::Status same = testing::CheckSameResult(dense, sch2.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch2.program());
}

TEST(ComputeAt, RejectsLoopThatDoesNotContainTheConsumer) {
  Program initial = testing::PadStencilProgram(8);
  TracedSchedule sch(initial);
  std::string before = PrintProgram(sch.program());
  std::vector<LoopRV> own = sch.GetLoops(sch.GetBlock("Pad").value()).value();
  absl::Status s = sch.ComputeAt(sch.GetBlock("Pad").value(), own[0]);
  ASSERT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "compute_at: block \"Pad\" cannot be computed at loop \"i\": "
            "consumer \"B\" is "
            "not under it");
  EXPECT_EQ(PrintProgram(sch.program()), before);
}

TEST(ComputeAt, RejectsConsumerOutsideTheLoop) {
  // B is read by C and D, in separate nests: under C's loop only C is.
  Program initial = testing::ElementwiseChainProgram(4, 4);
  TracedSchedule sch(initial);
  std::string before = PrintProgram(sch.program());
  std::vector<LoopRV> c_loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  absl::Status s = sch.ComputeAt(sch.GetBlock("B").value(), c_loops[0]);
  ASSERT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(s.message(), "consumer \"D\" is not under it")) << s;
  EXPECT_EQ(PrintProgram(sch.program()), before);
  EXPECT_TRUE(primitive::ComputeLocations(sch.program(), "B").empty());
}

TEST(ComputeAt, RejectsOutputsAndUnknownNames) {
  Program initial = testing::TwoStageProgram(6);
  TracedSchedule sch(initial);
  std::string before = PrintProgram(sch.program());
  std::vector<LoopRV> b_loops = sch.GetLoops(sch.GetBlock("B").value()).value();
  absl::Status out = sch.ComputeAt(sch.GetBlock("C").value(), b_loops[0]);
  ASSERT_EQ(out.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(out.message(), "it writes C, an output of the program"))
      << out;
  Program copy = initial;
  absl::Status unknown = primitive::ComputeAt(&copy, "B", "nope", false);
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.message(), "compute_at: no loop named \"nope\"");
  EXPECT_EQ(primitive::ComputeAt(&copy, "Nope", "i", false).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PrintProgram(sch.program()), before);
}

TEST(ComputeLocations, AreTheLoopsAboveTheConsumers) {
  Program initial = testing::PadStencilProgram(9);
  TracedSchedule sch(initial);
  SplitStencil(sch);
  EXPECT_EQ(primitive::ComputeLocations(sch.program(), "Pad"),
            (std::vector<std::string>{"i_1_0", "i_1_1"}));
  EXPECT_TRUE(
      primitive::ComputeLocations(sch.program(), "B").empty());  // an output
  EXPECT_TRUE(primitive::ComputeLocations(sch.program(), "nope").empty());
}

TEST(ComputeLocations, SampledLocationReplaysWithEveryDecision) {
  Program initial = testing::PadStencilProgram(9);
  for (int64_t decision : {-1, 0, 1}) {
    TracedSchedule sch(initial, /*seed=*/3);
    SplitStencil(sch);
    BlockRV pad = sch.GetBlock("Pad").value();
    auto where = sch.SampleComputeLocation(pad, decision);
    ASSERT_TRUE(where.ok()) << where.status();
    absl::Status s = sch.ComputeAt(pad, *where);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(LoopNames(sch, "Pad").size(), decision < 0 ? 1u : decision + 2u);
    absl::Status same = testing::CheckSameResult(initial, sch.program());
    EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
    absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
    EXPECT_TRUE(trip.ok()) << trip;
  }
}

}  // namespace
}  // namespace lathe
