// Tests of check_footprint (compiler/schedule/primitive/check_footprint.cc):
// tiles within the bound are recorded and replay (and survive the text
// form); tiles past it are refused naming the bound and the values, and
// record nothing; a malformed layout is an InvalidArgument; a replay whose
// decisions pass the bound fails at the check.
#include <gtest/gtest.h>

#include <vector>

#include "compiler/schedule/replay.h"
#include "compiler/schedule/trace_text.h"
#include "compiler/schedule/traced_schedule.h"
#include "tests/compiler/schedule/test_programs.h"
#include "tests/compiler/schedule/trace_round_trip.h"

namespace lathe {
namespace {

// A[i, k] and B[k, j]: tiles of ti x tk and tk x tj over factors ti, tj,
// tk, each at most 16 (the loops' extent).
const std::vector<int64_t> kMatmulLayout = {
    2,                                   // inputs
    2, 1, 1, 16, 1, 0, 1, 1, 16, 1, 2,   // A
    2, 1, 1, 16, 1, 2, 1, 1, 16, 1, 1};  // B

struct Sampled {
  Program initial = testing::MatmulProgram(16, 16, 16);
  TracedSchedule sch{initial};
  std::vector<LoopRV> loops;
  std::vector<ExprRV> i, j;

  Sampled(std::vector<int64_t> i_tile, std::vector<int64_t> j_tile) {
    loops = sch.GetLoops(sch.GetBlock("C").value()).value();
    i = sch.SamplePerfectTile(loops[0], 2, 16, i_tile).value();
    j = sch.SamplePerfectTile(loops[1], 2, 16, j_tile).value();
  }
};

TEST(CheckFootprint, WithinTheBoundIsRecordedAndReplays) {
  Sampled s({2, 8}, {4, 4});
  // (8 + 4) x 4 = 48 elements.
  ASSERT_TRUE(s.sch
                  .CheckFootprint({s.i[1], s.j[1], int64_t{4}}, kMatmulLayout,
                                  48, "shared")
                  .ok());
  ASSERT_TRUE(s.sch.Split(s.loops[0], {s.i[0], s.i[1]}).ok());
  const Trace& trace = s.sch.trace();
  EXPECT_EQ(trace.instructions[4].kind, "check_footprint");
  absl::Status round_trip = testing::CheckTraceRoundTrip(s.sch, s.initial);
  EXPECT_TRUE(round_trip.ok()) << round_trip;
  absl::StatusOr<Trace> parsed = ParseTraceText(trace.ToText());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->ToText(), trace.ToText());
}

TEST(CheckFootprint, PastTheBoundIsRefusedAndRecordsNothing) {
  Sampled s({2, 8}, {4, 4});
  const size_t recorded = s.sch.trace().instructions.size();
  absl::Status refused = s.sch.CheckFootprint({s.i[1], s.j[1], int64_t{4}},
                                              kMatmulLayout, 47, "shared");
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.message(),
            "check_footprint: tiles of more than 47 elements (shared) with "
            "factors 8, 4, 4");
  EXPECT_EQ(s.sch.trace().instructions.size(), recorded);
  // A malformed layout, a None factor and a bound below 1 are errors.
  EXPECT_EQ(s.sch.CheckFootprint({s.i[1]}, kMatmulLayout, 100, "x").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.sch.CheckFootprint({std::monostate{}}, {0}, 100, "x").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.sch.CheckFootprint({s.i[1]}, {0}, 0, "x").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CheckFootprint, AReplayPastTheBoundFailsAtTheCheck) {
  Sampled s({4, 4}, {4, 4});
  ASSERT_TRUE(s.sch
                  .CheckFootprint({s.i[1], s.j[1], int64_t{4}}, kMatmulLayout,
                                  40, "shared")
                  .ok());
  ASSERT_TRUE(s.sch.Split(s.loops[0], {s.i[0], s.i[1]}).ok());
  Trace trace = s.sch.trace();
  // The i tile drawn as 16 instead: (16 + 4) x 4 = 80 > 40.
  ASSERT_EQ(trace.instructions[2].kind, "sample_perfect_tile");
  Decisions decisions = trace.decisions;
  decisions[2] = {1, 16};
  auto replayed = ReplayTrace(trace, s.initial, decisions);
  ASSERT_FALSE(replayed.ok());
  EXPECT_NE(replayed.status().message().find("instruction 4"),
            std::string::npos)
      << replayed.status();
  EXPECT_NE(replayed.status().message().find("more than 40 elements"),
            std::string::npos)
      << replayed.status();
}

}  // namespace
}  // namespace lathe
