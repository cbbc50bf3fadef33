// The limits of proto/trace_limits.h, held in every way a trace comes in:
// JSON, text, a proto, a trace built in code and replayed, and the nest a
// replay builds.
#include "proto/trace_limits.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/schedule/replay.h"
#include "compiler/schedule/trace.h"
#include "compiler/schedule/trace_text.h"
#include "proto/trace.pb.h"
#include "tests/compiler/schedule/test_programs.h"

namespace lathe {
namespace {

using testing::MatmulProgram;

// get_block C, get_loops (r1, r2, r3) of a matmul.
Trace MatmulLoops() {
  Trace t;
  t.instructions.push_back(
      {"get_block", {}, {{"name", std::string("C")}}, {0}});
  t.instructions.push_back({"get_loops", {TraceInput::RV(0)}, {}, {1, 2, 3}});
  return t;
}

// MatmulLoops and a split of r1 into `factors` unit factors and an inferred
// one.
Trace SplitInto(int factors) {
  Trace t = MatmulLoops();
  Instruction split{"split", {TraceInput::RV(1)}, {}, {}};
  for (int i = 0; i + 1 < factors; ++i)
    split.inputs.push_back(TraceInput::Int(1));
  split.inputs.push_back(TraceInput::None());
  for (int i = 0; i < factors; ++i) split.outputs.push_back(4 + i);
  t.instructions.push_back(split);
  return t;
}

void ExpectRefused(const absl::Status& status, const std::string& limit) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find(limit), std::string::npos) << status;
}

TEST(TraceLimits, SplitWithTooManyFactorsIsRefusedInEveryForm) {
  const Trace t = SplitInto(100000);
  ExpectRefused(Trace::FromJson(t.ToJson()).status(), "kMaxSplitFactors");
  ExpectRefused(ParseTraceText(t.ToText()).status(), "kMaxSplitFactors");
  ExpectRefused(ReplayTrace(t, MatmulProgram(64, 64, 64)).status(),
                "kMaxSplitFactors");
  // At the limit it replays.
  EXPECT_TRUE(
      ReplayTrace(SplitInto(kMaxSplitFactors), MatmulProgram(64, 64, 64)).ok());
}

TEST(TraceLimits, ConstantFactorsOutOfRangeAreRefused) {
  Trace t = MatmulLoops();
  t.instructions.push_back(
      {"split",
       {TraceInput::RV(1), TraceInput::Int(int64_t{1} << 40),
        TraceInput::None()},
       {},
       {4, 5}});
  ExpectRefused(CheckTraceLimits(t), "kMaxSplitProduct");
  t.instructions.back().inputs = {TraceInput::RV(1),
                                  TraceInput::Int(int64_t{1} << 20),
                                  TraceInput::Int(int64_t{1} << 20)};
  ExpectRefused(CheckTraceLimits(t), "kMaxSplitProduct");
}

TEST(TraceLimits, LargePerfectTileDecisionsAreRefused) {
  Trace t = MatmulLoops();
  t.instructions.push_back(
      {"sample_perfect_tile",
       {TraceInput::RV(1)},
       {{"n", int64_t{200000}}, {"max_innermost", int64_t{4}}},
       {}});
  for (int i = 0; i < 200000; ++i)
    t.instructions.back().outputs.push_back(4 + i);
  t.decisions[2] = std::vector<int64_t>(200000, 1);
  ExpectRefused(Trace::FromJson(t.ToJson()).status(),
                "kMaxInstructionOperands");
  ExpectRefused(ReplayTrace(t, MatmulProgram(64, 64, 64)).status(),
                "kMaxInstructionOperands");
  // Within the operand limit, n and the decision are held to the factors'.
  Trace small = MatmulLoops();
  small.instructions.push_back(
      {"sample_perfect_tile",
       {TraceInput::RV(1)},
       {{"n", int64_t{2}}, {"max_innermost", int64_t{4}}},
       {4, 5}});
  small.decisions[2] = std::vector<int64_t>(100, 1);
  ExpectRefused(CheckTraceLimits(small), "kMaxSplitFactors");
  small.decisions[2] = {int64_t{1} << 33, 1};
  ExpectRefused(CheckTraceLimits(small), "kMaxSplitProduct");
  small.decisions[2] = {16, 4};
  small.instructions.back().attrs[0].second = int64_t{64};
  ExpectRefused(CheckTraceLimits(small), "kMaxSplitFactors");
}

TEST(TraceLimits, TooManyInstructionsAreRefused) {
  Trace t = MatmulLoops();
  int64_t loop = 3, next = 4;
  for (int i = 0; i < 20000; ++i) {
    t.instructions.push_back(
        {"split",
         {TraceInput::RV(loop), TraceInput::None(), TraceInput::Int(1)},
         {},
         {next, next + 1}});
    loop = next + 1;
    next += 2;
  }
  ExpectRefused(Trace::FromJson(t.ToJson()).status(), "kMaxTraceInstructions");
  ExpectRefused(ParseTraceText(t.ToText()).status(), "kMaxTraceInstructions");
  ExpectRefused(ReplayTrace(t, MatmulProgram(64, 64, 64)).status(),
                "kMaxTraceInstructions");
}

TEST(TraceLimits, ChainedSplitsStopAtTheNestDepthLimit) {
  Trace t = MatmulLoops();
  int64_t loop = 3, next = 4;
  for (int i = 0; i < 1000; ++i) {
    t.instructions.push_back(
        {"split",
         {TraceInput::RV(loop), TraceInput::None(), TraceInput::Int(1)},
         {},
         {next, next + 1}});
    loop = next + 1;
    next += 2;
  }
  ASSERT_TRUE(CheckTraceLimits(t).ok());
  absl::Status replayed = ReplayTrace(t, MatmulProgram(64, 64, 64)).status();
  EXPECT_EQ(replayed.code(), absl::StatusCode::kFailedPrecondition) << replayed;
  EXPECT_NE(replayed.message().find("kMaxLoopNestDepth"), std::string::npos)
      << replayed;
  EXPECT_NE(replayed.message().find(
                absl::StrCat("instruction ", kMaxLoopNestDepth - 3 + 2)),
            std::string::npos)
      << replayed;
}

TEST(TraceLimits, DeeplyNestedOrHugeJsonIsRefused) {
  const std::string nested = "{\"instructions\": " + std::string(100000, '[') +
                             std::string(100000, ']') + "}";
  EXPECT_FALSE(Trace::FromJson(nested).ok());
  const std::string objects = [] {
    std::string s;
    for (int i = 0; i < 100000; ++i) s += "{\"instructions\": [";
    return s;
  }();
  EXPECT_FALSE(Trace::FromJson(objects).ok());
  ExpectRefused(Trace::FromJson(std::string(kMaxTraceBytes + 1, ' ')).status(),
                "kMaxTraceBytes");
  ExpectRefused(ParseTraceText(std::string(kMaxTraceBytes + 1, '\n')).status(),
                "kMaxTraceBytes");
}

TEST(TraceLimits, LongNamesAreRefusedAndShownBounded) {
  proto::Trace message;
  message.set_format_version(kTraceFormatVersion);
  message.add_instructions()->set_kind(std::string(100000, 'k'));
  absl::Status status = Trace::FromProto(message).status();
  ExpectRefused(status, "kMaxTraceNameBytes");
  EXPECT_LT(status.message().size(), 1000u);
  message.mutable_instructions(0)->set_kind("get_block\x1b[2J");
  message.mutable_instructions(0)->add_attrs()->set_name(
      std::string(1000, 'a'));
  status = Trace::FromProto(message).status();
  ExpectRefused(status, "kMaxTraceNameBytes");
  EXPECT_EQ(status.message().find('\x1b'), std::string::npos) << status;
}

}  // namespace
}  // namespace lathe
