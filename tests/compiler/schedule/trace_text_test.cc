// ParseTraceText: the text form of real traces (random schedules of every
// kind of operator, the default schedule) reads back to the same trace and
// replays to the same program; malformed text is refused with the line, the
// column and what is wrong there.
#include "compiler/schedule/trace_text.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/schedule/default_schedule.h"
#include "compiler/schedule/replay.h"
#include "compiler/schedule/traced_schedule.h"
#include "compiler/workload/spec.h"
#include "tests/compiler/property/random_schedule.h"

namespace lathe {
namespace {

// ToText -> parse -> ToText is the identity, the parsed trace equals the
// original (but for the workload, which the text does not name), and it
// replays on `initial` to `expected`.
void ExpectRoundTrip(const Trace& trace, const Program& initial,
                     const Program& expected) {
  const std::string text = trace.ToText();
  absl::StatusOr<Trace> parsed = ParseTraceText(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << text;
  EXPECT_EQ(parsed->ToText(), text);
  Trace unnamed = trace;
  unnamed.workload.clear();
  EXPECT_TRUE(*parsed == unnamed) << text;
  auto replayed = ReplayTrace(*parsed, initial);
  ASSERT_TRUE(replayed.ok()) << replayed.status() << "\n" << text;
  EXPECT_TRUE(StructuralEqual((*replayed)->program(), expected)) << text;
}

const char* const kSpecs[] = {
    "matmul:M=13,N=11,K=17",
    "batch_matmul:B=3,M=5,N=7,K=3",
    "dense:M=8,N=8,K=8,bias=1,relu=1",
    "conv2d_nchw:N=1,C=4,H=8,W=8,K=4,R=3,S=3,pad=1",
    "conv2d_nhwc:N=1,C=3,H=7,W=7,K=5,R=3,S=3,stride=2",
    "max_pool2d:N=1,C=2,H=7,W=7,R=3,S=3,stride=2,pad=1",
    "avg_pool2d:N=1,C=3,H=8,W=8,R=2,S=2,stride=2",
    "softmax:M=3,N=7",
    "add:M=5,N=7",
    "relu:M=1,N=17",
};

TEST(TraceText, RandomSchedulesRoundTrip) {
  testing::RandomScheduleStats stats;
  for (const char* spec : kSpecs) {
    SCOPED_TRACE(spec);
    absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
    ASSERT_TRUE(workload.ok()) << workload.status();
    absl::StatusOr<Program> initial = workload->InitialProgram();
    ASSERT_TRUE(initial.ok()) << initial.status();
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      TracedSchedule sch(*initial, seed);
      Rng rng(seed * 7919);
      testing::ApplyRandomSchedule(&sch, &rng, 24, &stats);
      ExpectRoundTrip(sch.trace(), *initial, sch.program());
    }
  }
  // The traces read back cover every primitive the random schedules draw.
  for (const auto& [primitive, count] : stats.applied) {
    EXPECT_GT(count, 0) << primitive;
  }
}

TEST(TraceText, DefaultSchedulesRoundTrip) {
  for (const char* spec : kSpecs) {
    SCOPED_TRACE(spec);
    absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
    ASSERT_TRUE(workload.ok()) << workload.status();
    absl::StatusOr<Program> initial = workload->InitialProgram();
    ASSERT_TRUE(initial.ok()) << initial.status();
    absl::StatusOr<Trace> trace = DefaultSchedule(*initial, {});
    ASSERT_TRUE(trace.ok()) << trace.status();
    auto scheduled = ReplayTrace(*trace, *initial);
    ASSERT_TRUE(scheduled.ok()) << scheduled.status();
    ExpectRoundTrip(*trace, *initial, (*scheduled)->program());
  }
}

// Weights that are whole numbers stay numbers (the tuner's register-tile
// choice samples with weights 1.0), and weights keep every digit.
TEST(TraceText, CategoricalWeightsStayNumbers) {
  absl::StatusOr<Workload> workload = ParseWorkloadSpec("matmul:M=8,N=8,K=8");
  ASSERT_TRUE(workload.ok());
  absl::StatusOr<Program> initial = workload->InitialProgram();
  ASSERT_TRUE(initial.ok());
  TracedSchedule sch(*initial, 3);
  ASSERT_TRUE(sch.SampleCategorical({4, 8, 16}, {1.0, 1.0, 1.0}).ok());
  ASSERT_TRUE(sch.SampleCategorical({1, 2}, {1.0 / 3, 2.0 / 3}).ok());
  const std::string text = sch.trace().ToText();
  EXPECT_NE(text.find("probs=[1.0, 1.0, 1.0]"), std::string::npos) << text;
  ExpectRoundTrip(sch.trace(), *initial, sch.program());
}

TEST(TraceText, ReadsHandWrittenText) {
  absl::StatusOr<Trace> trace = ParseTraceText(
      "# a split by hand\n"
      "\n"
      "  r0 = get_block(name=\"C\")\n"
      "r1, r2, r3 = get_loops(r0)   # the block's loops\n"
      "r4, r5 = sample_perfect_tile(r1, n=2, max_innermost=4) # decision: "
      "[2, 4]\n"
      "r6, r7 = split(r1, r4, None)\n"
      "annotate(r0, key=\"k\\\"q\", value=-3, xs=[], fs=[0.5, 2])\n");
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->instructions.size(), 5u);
  EXPECT_EQ(trace->instructions[0].kind, "get_block");
  EXPECT_EQ(trace->instructions[1].outputs, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(trace->decisions.at(2), (std::vector<int64_t>{2, 4}));
  const Instruction& split = trace->instructions[3];
  ASSERT_EQ(split.inputs.size(), 3u);
  EXPECT_TRUE(split.inputs[1] == TraceInput::RV(4));
  EXPECT_TRUE(split.inputs[2] == TraceInput::None());
  const Instruction& annotate = trace->instructions[4];
  EXPECT_EQ(*annotate.StringAttr("key"), "k\"q");
  EXPECT_EQ(*annotate.IntAttr("value"), -3);
  EXPECT_TRUE(annotate.IntsAttr("xs")->empty());
  EXPECT_EQ(*annotate.FloatsAttr("fs"), (std::vector<double>{0.5, 2.0}));
  EXPECT_TRUE(trace->workload.empty());
}

TEST(TraceText, EmptyTextIsTheEmptyTrace) {
  absl::StatusOr<Trace> trace = ParseTraceText("# nothing\n\n");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_TRUE(trace->instructions.empty());
}

// Each bad text is refused with this message (line, column, the fault).
TEST(TraceText, RefusesBadText) {
  const std::pair<const char*, const char*> cases[] = {
      {"r0 = get_block(name=\"C\")\nr1 = get_loops(r7)\n",
       "line 2, column 16: get_loops uses r7 before it is defined"},
      {"r0 = get_block(name=\"C\")\nr0 = get_block(name=\"D\")\n",
       "line 2, column 1: get_block redefines r0"},
      {"r0 = get_block(name=\"C\")\nr1, r2 = split(r0, 4 None)\n",
       "line 2, column 22: expected ',' or ')', found 'None'"},
      {"r0 = get_block(name=\"C\"\n",
       "line 1, column 24: expected ',' or ')', found the end of the line"},
      {"r0 = get_block name=\"C\")\n",
       "line 1, column 16: expected '(' after get_block, found 'name'"},
      {"r0 get_block()\n",
       "line 1, column 4: expected '(' after r0, found 'get_block'"},
      {"r0 = (name=\"C\")\n",
       "line 1, column 6: expected an instruction kind, found '('"},
      {"r0 = get_block(name=\"C)\n",
       "line 1, column 21: string is not closed by '\"'"},
      {"r0 = get_block(name=C)\n",
       "line 1, column 21: expected a value (a number, a \"string\" or a "
       "[list]), found 'C'"},
      {"r0 = get_block(name=\"C\", name=\"D\")\n",
       "line 1, column 26: attribute name given twice"},
      {"r0 = get_block(name=\"C\", r3)\n",
       "line 1, column 26: expected an attribute name=value (inputs come "
       "before attributes), found 'r3'"},
      {"r0 = get_block(name=\"C\")  # decision: [1]\n",
       "line 1, column 6: a decision for get_block, which samples nothing"},
      {"r0 = sample_categorical(candidates=[1, 2], probs=[1.0, x])\n",
       "line 1, column 56: expected a number or ']', found 'x'"},
      {"r0 = sample_categorical(candidates=[99999999999999999999])\n",
       "line 1, column 37: integer '99999999999999999999' is out of the "
       "64-bit range"},
      {"r0 = get_block(name=\"C\")\nr1 = get_loops(r0, 2.5)\n",
       "line 2, column 20: an input number must be an integer"},
      {"r0 = sample_categorical(candidates=[1], probs=[1.0])  # decision: 1\n",
       "line 1, column 67: expected '[' to start the decision, found '1'"},
  };
  for (const auto& [text, message] : cases) {
    absl::StatusOr<Trace> trace = ParseTraceText(text);
    ASSERT_FALSE(trace.ok()) << text;
    EXPECT_EQ(trace.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(trace.status().message(), message))
        << "text: " << text << "\nwant: " << message
        << "\ngot:  " << trace.status().message();
  }
}

}  // namespace
}  // namespace lathe
