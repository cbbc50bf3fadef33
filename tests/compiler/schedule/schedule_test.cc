// get_block, get_loops, get_producers/get_consumers and the handles of
// ConcreteSchedule: what they return, and the errors of stale or mistyped
// handles.
#include "compiler/schedule/schedule.h"

#include <gtest/gtest.h>

#include "compiler/ir/structural_equal.h"
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
  EXPECT_NE(missing.status().message().find("blocks: T_dense, T_bias, Y"), std::string::npos)
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
  EXPECT_NE(stale.message().find("no longer exists"), std::string::npos) << stale;
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
  trace.instructions.push_back({"get_block", {}, {{"name", std::string("C")}}, {0}});
  trace.instructions.push_back({"tensorize", {TraceInput::RV(0)}, {}, {}});
  auto replayed = ReplayTrace(trace, initial);
  ASSERT_FALSE(replayed.ok());
  EXPECT_NE(replayed.status().message().find("instruction 1 has unknown kind \"tensorize\""),
            std::string::npos) << replayed.status();
}

TEST(Replay, FailingPrimitiveNamesTheInstruction) {
  Program initial = testing::MatmulProgram(8, 8, 8);
  Trace trace;
  trace.instructions.push_back({"get_block", {}, {{"name", std::string("X")}}, {0}});
  auto replayed = ReplayTrace(trace, initial);
  ASSERT_FALSE(replayed.ok());
  EXPECT_NE(replayed.status().message().find("replay: instruction 0 `r0 = get_block(name=\"X\")`"),
            std::string::npos) << replayed.status();
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

}  // namespace
}  // namespace lathe
