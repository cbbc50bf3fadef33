// Tests of check_product (compiler/schedule/primitive/check_product.cc): a
// product of sampled values within its bound is recorded and replays; one
// past it is refused naming the values, the bound and what it bounds,
// records nothing, and a replay whose decisions pass it fails at the check,
// before the primitives after it.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "compiler/schedule/replay.h"
#include "compiler/schedule/trace_text.h"
#include "compiler/schedule/traced_schedule.h"
#include "tests/compiler/schedule/test_programs.h"
#include "tests/compiler/schedule/trace_round_trip.h"

namespace lathe {
namespace {

// A 16^3 matmul's schedule with the tile of its i loop (and of its j loop,
// when given) sampled as given, [outer, inner] each.
struct Sampled {
  Program initial = testing::MatmulProgram(16, 16, 16);
  TracedSchedule sch{initial};
  std::vector<LoopRV> loops;
  std::vector<ExprRV> i, j;

  explicit Sampled(std::vector<int64_t> i_tile,
                   std::optional<std::vector<int64_t>> j_tile = std::nullopt) {
    loops = sch.GetLoops(sch.GetBlock("C").value()).value();
    i = sch.SamplePerfectTile(loops[0], 2, 8, i_tile).value();
    if (j_tile.has_value())
      j = sch.SamplePerfectTile(loops[1], 2, 8, j_tile).value();
  }
};

TEST(CheckProduct, WithinTheBoundIsRecordedAndReplays) {
  Sampled s({4, 4}, std::vector<int64_t>{2, 8});
  // 4 x 8 x 2 = 64, at the bound.
  ASSERT_TRUE(
      s.sch.CheckProduct({s.i[1], s.j[1], int64_t{2}}, 64, "registers").ok());
  ASSERT_TRUE(s.sch.Split(s.loops[0], {s.i[0], s.i[1]}).ok());
  const Trace& trace = s.sch.trace();
  const Instruction& check = trace.instructions[4];
  EXPECT_EQ(check.kind, "check_product");
  EXPECT_EQ(check.inputs.size(), 3u);
  EXPECT_NE(trace.ToText().find(
                "check_product(r5, r7, 2, at_most=64, what=\"registers\")"),
            std::string::npos)
      << trace.ToText();
  absl::Status round_trip = testing::CheckTraceRoundTrip(s.sch, s.initial);
  EXPECT_TRUE(round_trip.ok()) << round_trip;
  absl::StatusOr<Trace> parsed = ParseTraceText(trace.ToText());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->ToText(), trace.ToText());
}

TEST(CheckProduct, PastTheBoundIsRefusedAndRecordsNothing) {
  Sampled s({2, 8}, std::vector<int64_t>{2, 8});
  TracedSchedule& sch = s.sch;
  const size_t recorded = sch.trace().instructions.size();
  absl::Status refused = sch.CheckProduct({s.i[1], s.j[1]}, 63, "registers");
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.message(),
            "check_product: 8 x 8 is more than 63 (registers)");
  EXPECT_EQ(sch.trace().instructions.size(), recorded);
  // Products past int64 saturate rather than wrap.
  EXPECT_EQ(
      sch.CheckProduct({int64_t{1} << 40, int64_t{1} << 40}, 100, "x").code(),
      absl::StatusCode::kFailedPrecondition);
  // A factor that is not a value, and a bound below 1, are errors.
  EXPECT_EQ(sch.CheckProduct({std::monostate{}}, 8, "x").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(sch.CheckProduct({s.i[1]}, 0, "x").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(sch.CheckProduct({}, 8, "x").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CheckProduct, AReplayPastTheBoundFailsAtTheCheck) {
  Sampled s({4, 4});
  ASSERT_TRUE(s.sch.CheckProduct({s.i[1]}, 4, "registers").ok());
  ASSERT_TRUE(s.sch.Split(s.loops[0], {s.i[0], s.i[1]}).ok());
  Trace trace = s.sch.trace();
  // The sample at instruction 2; a decision of [2, 8] passes the bound.
  ASSERT_EQ(trace.instructions[2].kind, "sample_perfect_tile");
  Decisions decisions = trace.decisions;
  decisions[2] = {2, 8};
  auto replayed = ReplayTrace(trace, s.initial, decisions);
  ASSERT_FALSE(replayed.ok());
  EXPECT_NE(replayed.status().message().find("instruction 3"),
            std::string::npos)
      << replayed.status();
  EXPECT_NE(replayed.status().message().find("8 is more than 4 (registers)"),
            std::string::npos)
      << replayed.status();
  // Sampled afresh, the points that replay all pass it.
  trace.decisions.clear();
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto point = SampleTrace(trace, s.initial, {}, seed);
    ASSERT_TRUE(point.ok()) << point.status();
    EXPECT_LE((*point)->trace().decisions.at(2).back(), 4);
  }
}

}  // namespace
}  // namespace lathe
