// Tests of the instruction registry (compiler/schedule/instruction_kind.h):
// names are unique and found, an unknown name is refused naming it, and
// every recorded instruction carries its kind's attributes in order, its
// decision exactly when it samples, and replays to itself; SampleTrace
// (replay.h) draws again until a point replays.
#include "compiler/schedule/instruction_kind.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "compiler/schedule/replay.h"
#include "compiler/schedule/traced_schedule.h"
#include "tests/compiler/property/random_schedule.h"
#include "tests/compiler/schedule/test_programs.h"
#include "tests/compiler/schedule/trace_round_trip.h"

namespace lathe {
namespace {

struct Recorded {
  Program initial;
  Trace trace;
};

// Traces of random schedules on programs of every shape the tests have,
// plus what the random schedules do not draw (a bind, caches in a layout, a
// checked product);
// together they use every primitive and every attribute.
const std::vector<Recorded>& Corpus() {
  static const auto* const corpus = [] {
    auto* out = new std::vector<Recorded>;
    const std::vector<Program> programs = {
        testing::MatmulProgram(16, 16, 16),
        testing::DenseBiasReluProgram(8, 8, 8),
        testing::TwoStageProgram(16),
        testing::ElementwiseChainProgram(8, 8),
        testing::VectorSumProgram(64),
        testing::RowMaxProgram(8, 16),
        testing::PadStencilProgram(16),
    };
    for (const Program& p : programs) {
      for (uint64_t seed = 0; seed < 12; ++seed) {
        TracedSchedule sch(p, seed);
        Rng rng(seed * 31 + 1);
        testing::RandomScheduleStats stats;
        testing::ApplyRandomSchedule(&sch, &rng, 30, &stats);
        out->push_back({p, sch.trace()});
      }
    }
    Program two = testing::TwoStageProgram(16);
    TracedSchedule sch(two);
    LoopRV loop = sch.GetLoops(sch.GetBlock("C").value()).value()[0];
    EXPECT_TRUE(sch.Bind(loop, "threadIdx.x").ok());
    out->push_back({two, sch.trace()});
    // Caches in another layout (identity layouts are not recorded).
    Program matmul = testing::MatmulProgram(16, 16, 16);
    TracedSchedule packed(matmul);
    BlockRV c = packed.GetBlock("C").value();
    const Layout panels{{1, 4}, {1, 0, 2}};
    EXPECT_TRUE(packed.CacheRead(c, 1, "global", panels).ok());
    EXPECT_TRUE(packed.CacheWrite(c, 0, "global", panels).ok());
    out->push_back({matmul, packed.trace()});
    // A bound checked on sampled values (what a GPU design space does).
    TracedSchedule checked(matmul);
    LoopRV i = checked.GetLoops(checked.GetBlock("C").value()).value()[0];
    std::vector<ExprRV> tile = checked.SamplePerfectTile(i, 2, 4).value();
    EXPECT_TRUE(checked.CheckProduct({tile[1], int64_t{2}}, 8, "test").ok());
    // One input of one dimension, spanning tile[1] x 2.
    EXPECT_TRUE(checked
                    .CheckFootprint({tile[1], int64_t{2}},
                                    {1, 1, 1, 1, 16, 2, 0, 1}, 8, "test")
                    .ok());
    out->push_back({matmul, checked.trace()});
    return out;
  }();
  return *corpus;
}

TEST(InstructionKinds, EachHasAUniqueNameThatFindsIt) {
  std::set<std::string> names;
  for (const InstructionKind* kind : InstructionKinds()) {
    EXPECT_FALSE(kind->name.empty());
    EXPECT_TRUE(names.insert(kind->name).second) << kind->name;
    EXPECT_NE(kind->replay, nullptr) << kind->name;
    std::set<std::string> attrs(kind->attrs.begin(), kind->attrs.end());
    EXPECT_EQ(attrs.size(), kind->attrs.size()) << kind->name;
    absl::StatusOr<const InstructionKind*> found =
        FindInstructionKind(kind->name);
    ASSERT_TRUE(found.ok()) << found.status();
    EXPECT_EQ(*found, kind);
  }
}

TEST(InstructionKinds, AnUnknownNameIsRefusedNamingIt) {
  absl::StatusOr<const InstructionKind*> found =
      FindInstructionKind("tile_everything");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(found.status().message().find("\"tile_everything\""),
            std::string::npos)
      << found.status();

  // Replay refuses it too, naming the instruction.
  const Recorded& recorded = Corpus().front();
  Trace trace = recorded.trace;
  trace.instructions[1].kind = "tile_everything";
  auto replayed = ReplayTrace(trace, recorded.initial);
  ASSERT_FALSE(replayed.ok());
  EXPECT_EQ(replayed.status().message(),
            "replay: instruction 1 has unknown kind \"tile_everything\"");
}

TEST(InstructionKinds, RecordedInstructionsFollowTheirKind) {
  std::set<std::string> used, attrs_used;
  for (const Recorded& recorded : Corpus()) {
    const Trace& trace = recorded.trace;
    for (size_t i = 0; i < trace.instructions.size(); ++i) {
      const Instruction& inst = trace.instructions[i];
      absl::StatusOr<const InstructionKind*> kind =
          FindInstructionKind(inst.kind);
      ASSERT_TRUE(kind.ok()) << kind.status();
      used.insert(inst.kind);
      // The attributes: declared names, in the declared order.
      size_t next = 0;
      for (const auto& [name, value] : inst.attrs) {
        while (next < (*kind)->attrs.size() && (*kind)->attrs[next] != name)
          ++next;
        ASSERT_LT(next, (*kind)->attrs.size())
            << inst.kind << ": attribute " << name
            << " is undeclared or out of order";
        attrs_used.insert(inst.kind + "." + name);
        ++next;
      }
      // A decision exactly for the instructions that sample.
      EXPECT_EQ(trace.decisions.count(static_cast<int64_t>(i)) == 1,
                (*kind)->samples)
          << inst.kind;
    }
  }
  // The corpus uses every primitive there is (25 kinds) and every attribute
  // of each.
  EXPECT_GE(used.size(), 25u);
  for (const InstructionKind* kind : InstructionKinds()) {
    if (!used.count(kind->name)) continue;
    for (const std::string& attr : kind->attrs)
      EXPECT_TRUE(attrs_used.count(kind->name + "." + attr))
          << kind->name << "." << attr;
  }
}

TEST(InstructionKinds, TracesRoundTripThroughJsonAndReplay) {
  for (const Recorded& recorded : Corpus()) {
    auto replayed = ReplayTrace(recorded.trace, recorded.initial);
    ASSERT_TRUE(replayed.ok()) << replayed.status();
    EXPECT_TRUE((*replayed)->trace() == recorded.trace)
        << recorded.trace.ToText();
    absl::Status round_trip =
        testing::CheckTraceRoundTrip(**replayed, recorded.initial);
    EXPECT_TRUE(round_trip.ok()) << round_trip;
  }
}

TEST(InstructionKinds, ReplayReadsTheDeclaredAttributes) {
  // An instruction stripped of its attributes is refused, naming the first
  // declared attribute that replay reads.
  std::set<std::string> checked;
  for (const Recorded& recorded : Corpus()) {
    for (size_t i = 0; i < recorded.trace.instructions.size(); ++i) {
      const Instruction& inst = recorded.trace.instructions[i];
      const InstructionKind* kind = FindInstructionKind(inst.kind).value();
      if (kind->attrs.empty() || !checked.insert(inst.kind).second) continue;
      Trace stripped = recorded.trace;
      stripped.instructions[i].attrs.clear();
      auto replayed = ReplayTrace(stripped, recorded.initial);
      ASSERT_FALSE(replayed.ok()) << inst.kind;
      EXPECT_NE(replayed.status().message().find(absl::StrCat(
                    inst.kind, ": missing attribute ", kind->attrs[0])),
                std::string::npos)
          << replayed.status();
    }
  }
  EXPECT_GE(checked.size(), 11u);  // every kind with attributes
}

// A space of two points: matmul's loop i (extent 16) split by a width,
// 2 or 1000, drawn with the given probabilities (instruction 2); 1000 pads
// the loop too much, so that point does not replay.
Trace SplitByDrawnWidth(const Program& matmul, std::vector<double> probs) {
  TracedSchedule sch(matmul);
  LoopRV i = sch.GetLoops(sch.GetBlock("C").value()).value()[0];
  ExprRV width =
      sch.SampleCategorical({2, 1000}, probs, /*decision=*/0).value();
  EXPECT_TRUE(sch.Split(i, {Factor{}, Factor{width}}).ok());
  Trace space = sch.trace();
  EXPECT_EQ(space.instructions[2].kind, "sample_categorical");
  space.decisions.clear();
  return space;
}

TEST(SampleTrace, DrawsAgainUntilThePointReplays) {
  const Program matmul = testing::MatmulProgram(16, 16, 16);
  const Trace space = SplitByDrawnWidth(matmul, {1, 1});
  int refused = 0;
  for (uint64_t seed = 0; seed < 32; ++seed) {
    SCOPED_TRACE(seed);
    auto first = ReplayTrace(space, matmul, {}, seed);
    int attempts = 0;
    auto sampled =
        SampleTrace(space, matmul, {}, seed, kSampleAttempts, &attempts);
    ASSERT_TRUE(sampled.ok()) << sampled.status();
    EXPECT_EQ((*sampled)->trace().decisions.at(2), std::vector<int64_t>{0});
    if (first.ok()) {
      // The first draw is ReplayTrace's: the same point.
      EXPECT_EQ(attempts, 1);
      EXPECT_TRUE((*sampled)->trace() == (*first)->trace());
    } else {
      EXPECT_GT(attempts, 1);
      ++refused;
    }
  }
  EXPECT_GT(refused, 4);  // the property is not vacuous
}

TEST(SampleTrace, NeverChangesAGivenDecision) {
  const Program matmul = testing::MatmulProgram(16, 16, 16);
  const Trace space = SplitByDrawnWidth(matmul, {1, 1});
  int attempts = 0;
  auto sampled = SampleTrace(space, matmul, {{2, {1}}}, /*seed=*/3,
                             kSampleAttempts, &attempts);
  ASSERT_FALSE(sampled.ok());
  EXPECT_EQ(attempts, 1);
  EXPECT_NE(sampled.status().message().find("split"), std::string::npos)
      << sampled.status();
}

TEST(SampleTrace, GivesUpAfterItsAttempts) {
  const Program matmul = testing::MatmulProgram(16, 16, 16);
  const Trace space = SplitByDrawnWidth(matmul, {0, 1});
  int attempts = 0;
  auto sampled = SampleTrace(space, matmul, {}, /*seed=*/3,
                             /*max_attempts=*/5, &attempts);
  ASSERT_FALSE(sampled.ok());
  EXPECT_EQ(attempts, 5);
  EXPECT_EQ(sampled.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace lathe
