// get_block, get_loops, get_producers/get_consumers and the handles of
// ConcreteSchedule: what they return, and the errors of stale or mistyped
// handles.
#include "compiler/schedule/schedule.h"

#include <gtest/gtest.h>

#include <set>

#include "absl/strings/str_cat.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/schedule/primitive/compute_at.h"
#include "compiler/schedule/replay.h"
#include "compiler/schedule/traced_schedule.h"
#include "tests/compiler/schedule/test_programs.h"

namespace lathe {
namespace {

TEST(GetBlock, FindsByNameAndListsBlocksWhenMissing) {
  ConcreteSchedule sch(testing::DenseBiasReluProgram(4, 4, 4));
  EXPECT_EQ(sch.BlockName(sch.GetBlock("T_bias").value()).value(), "T_bias");
  auto missing = sch.GetBlock("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("blocks: T_dense, T_bias, Y"),
            std::string::npos)
      << missing.status();
  EXPECT_FALSE(sch.GetBlock("root").ok());  // the root is not schedulable
}

TEST(GetLoops, OutermostFirst) {
  ConcreteSchedule sch(testing::MatmulProgram(4, 5, 6));
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  ASSERT_EQ(loops.size(), 3u);
  EXPECT_EQ(sch.LoopName(loops[0]).value(), "i");
  EXPECT_EQ(sch.LoopName(loops[1]).value(), "j");
  EXPECT_EQ(sch.LoopName(loops[2]).value(), "k");
}

TEST(GetProducersConsumers, FollowTheDataflow) {
  ConcreteSchedule sch(testing::DenseBiasReluProgram(4, 4, 4));
  BlockRV bias = sch.GetBlock("T_bias").value();
  std::vector<BlockRV> producers = sch.GetProducers(bias).value();
  std::vector<BlockRV> consumers = sch.GetConsumers(bias).value();
  ASSERT_EQ(producers.size(), 1u);
  ASSERT_EQ(consumers.size(), 1u);
  EXPECT_EQ(sch.BlockName(producers[0]).value(), "T_dense");
  EXPECT_EQ(sch.BlockName(consumers[0]).value(), "Y");
  EXPECT_TRUE(sch.GetConsumers(sch.GetBlock("Y").value()).value().empty());
}

TEST(Handles, StaleLoopIsReportedByName) {
  ConcreteSchedule sch(testing::MatmulProgram(8, 8, 8));
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  ASSERT_TRUE(sch.Split(loops[0], {Factor(), Factor(int64_t{2})}).ok());
  absl::Status stale = sch.Parallel(loops[0]);  // "i" was split away
  ASSERT_FALSE(stale.ok());
  EXPECT_NE(stale.message().find("loop \"i\""), std::string::npos) << stale;
  EXPECT_NE(stale.message().find("no longer exists"), std::string::npos)
      << stale;
}

TEST(Handles, WrongKindOfHandleIsAnError) {
  ConcreteSchedule sch(testing::MatmulProgram(8, 8, 8));
  BlockRV block = sch.GetBlock("C").value();
  auto as_loop = sch.LoopName(LoopRV{block.id});
  ASSERT_FALSE(as_loop.ok());
  EXPECT_EQ(as_loop.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(sch.Value(ExprRV{42}).ok());
}

TEST(Replay, UnknownInstructionKindNamesTheInstruction) {
  Program initial = testing::MatmulProgram(8, 8, 8);
  Trace trace;
  trace.instructions.push_back(
      {"get_block", {}, {{"name", std::string("C")}}, {0}});
  trace.instructions.push_back({"tensorize", {TraceInput::RV(0)}, {}, {}});
  auto replayed = ReplayTrace(trace, initial);
  ASSERT_FALSE(replayed.ok());
  EXPECT_NE(replayed.status().message().find(
                "instruction 1 has unknown kind \"tensorize\""),
            std::string::npos)
      << replayed.status();
}

TEST(Replay, FailingPrimitiveNamesTheInstruction) {
  Program initial = testing::MatmulProgram(8, 8, 8);
  Trace trace;
  trace.instructions.push_back(
      {"get_block", {}, {{"name", std::string("X")}}, {0}});
  auto replayed = ReplayTrace(trace, initial);
  ASSERT_FALSE(replayed.ok());
  EXPECT_NE(replayed.status().message().find(
                "replay: instruction 0 `r0 = get_block(name=\"X\")`"),
            std::string::npos)
      << replayed.status();
}

TEST(Replay, EmptyDecisionsSampleTheSpace) {
  // A design space: the same trace without decisions samples new programs.
  Program initial = testing::MatmulProgram(64, 64, 64);
  TracedSchedule sch(initial, /*seed=*/3);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  auto tiles = sch.SamplePerfectTile(loops[0], 3, 16).value();
  ASSERT_TRUE(sch.Split(loops[0], {tiles[0], tiles[1], tiles[2]}).ok());
  int distinct = 0;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    auto sampled = ReplayTrace(sch.trace(), initial, /*decisions=*/{}, seed);
    ASSERT_TRUE(sampled.ok()) << sampled.status();
    if (!StructuralEqual((*sampled)->program(), sch.program())) ++distinct;
    // The same seed gives the same program.
    auto again = ReplayTrace(sch.trace(), initial, {}, seed);
    EXPECT_TRUE(StructuralEqual((*sampled)->program(), (*again)->program()));
  }
  EXPECT_GT(distinct, 0);
}

// C's loops as (i_0, i_1, j): B's candidates are i_0 (refused: the row
// max(i_0 * 2 + i_1 - 1, 0) that C reads has no region while i_1 varies),
// i_1 and j.
void ScheduleShiftedRead(TracedSchedule& sch) {
  std::vector<LoopRV> c = sch.GetLoops(sch.GetBlock("C").value()).value();
  ASSERT_TRUE(sch.Split(c[0], {Factor(), Factor(int64_t{2})}).ok());
}

TEST(SampleComputeLocation, DecisionIndexesEveryLocationInOrder) {
  // A decision d is the d-th valid location of the whole list, however early
  // the list stops; past the end, the error names the full count.
  TracedSchedule sch(testing::ShiftedReadProgram(6, 8));
  ScheduleShiftedRead(sch);
  std::vector<std::string> all =
      primitive::ComputeLocations(sch.program(), "B");
  ASSERT_EQ(all.size(), 2u) << PrintProgram(sch.program());
  BlockRV b = sch.GetBlock("B").value();
  for (int64_t d = -1; d < static_cast<int64_t>(all.size()); ++d) {
    LoopRV where = sch.SampleComputeLocation(b, d).value();
    if (d < 0) {
      EXPECT_TRUE(sch.IsStayLocation(where));
    } else {
      EXPECT_EQ(sch.LoopName(where).value(), all[d]);
    }
  }
  for (int64_t bad : {int64_t{2}, int64_t{7}, int64_t{-2}}) {
    auto refused = sch.SampleComputeLocation(b, bad);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(
        refused.status().message(),
        absl::StrCat(
            "sample_compute_location: decision ", bad,
            " for block \"B\" is not -1 or an index into its 2 locations"));
  }
  // Sampled decisions (drawn over all the locations) replay to the same
  // program, and every choice comes up.
  std::set<std::string> chosen;
  for (uint64_t seed = 0; seed < 16; ++seed) {
    Program initial = testing::ShiftedReadProgram(6, 8);
    TracedSchedule sampled(initial, seed);
    ScheduleShiftedRead(sampled);
    BlockRV block = sampled.GetBlock("B").value();
    LoopRV where = sampled.SampleComputeLocation(block).value();
    chosen.insert(sampled.IsStayLocation(where)
                      ? "stay"
                      : sampled.LoopName(where).value());
    if (!sampled.IsStayLocation(where)) {
      ASSERT_TRUE(sampled.ComputeAt(block, where).ok());
    }
    auto again = ReplayTrace(sampled.trace(), initial);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(StructuralEqual((*again)->program(), sampled.program()));
  }
  EXPECT_EQ(chosen, (std::set<std::string>{"stay", all[0], all[1]}));
}

}  // namespace
}  // namespace lathe
