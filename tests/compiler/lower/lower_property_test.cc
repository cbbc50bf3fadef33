// The property of lowering: it never changes what a scheduled program
// computes. Random valid traces (tests/compiler/property/random_schedule.h)
// of several operators are lowered by the whole pipeline; each lowered
// program must be in lowered form and match the reference in the
// interpreter (which also catches a compacted buffer read before it is
// written in its scope). A failure prints the spec, the seed, the trace and
// both programs.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/lower/lowered_form.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/traced_schedule.h"
#include "tests/compiler/lower/lowering_test_util.h"
#include "tests/compiler/property/random_schedule.h"

namespace lathe {
namespace {

constexpr int kTracesPerShape = 30;
constexpr int kAttemptsPerTrace = 24;

const char* const kSpecs[] = {
    "matmul:M=8,N=8,K=8",
    "matmul:M=13,N=11,K=7",
    "dense:M=8,N=8,K=8,bias=1,relu=1",
    "dense:M=5,N=7,K=9,bias=1,relu=1",
    "conv2d_nchw:N=1,C=4,H=8,W=8,K=4,R=3,S=3,pad=1",
    "conv2d_nchw:N=1,C=3,H=7,W=7,K=5,R=3,S=3,stride=2,pad=1",
    "softmax:M=4,N=8",
    "softmax:M=3,N=7",
    "avg_pool2d:N=1,C=2,H=7,W=7,R=3,S=3,stride=2,pad=1",
    "avg_pool2d:N=2,C=1,H=5,W=11,R=3,S=3,pad=1",
};

class LowerProperty : public ::testing::TestWithParam<const char*> {};

TEST_P(LowerProperty, LoweredRandomSchedulesMatchTheReference) {
  const std::string spec = GetParam();
  Program initial = testing::InitialProgramOf(spec);
  testing::RandomScheduleStats stats;
  int compacted = 0;
  for (int t = 0; t < kTracesPerShape; ++t) {
    uint64_t seed = StableHash64(spec) + 7919 * static_cast<uint64_t>(t);
    TracedSchedule sch(initial, seed);
    Rng rng(seed ^ 0x2545f491);
    testing::ApplyRandomSchedule(&sch, &rng, kAttemptsPerTrace, &stats);
    auto describe = [&](const std::string& lowered) {
      return absl::StrCat("workload ", spec, ", seed ", seed, "\ntrace:\n",
                          sch.trace().ToText(), "scheduled:\n",
                          PrintProgram(sch.program()), "lowered:\n", lowered);
    };
    LowerReport report;
    absl::StatusOr<Program> lowered = LowerProgram(sch.program(), {}, &report);
    ASSERT_TRUE(lowered.ok()) << lowered.status() << "\n" << describe("");
    std::string text = PrintProgram(*lowered);
    ASSERT_TRUE(VerifyLowered(*lowered).ok()) << describe(text);
    absl::Status same = testing::MatchesReference(spec, *lowered);
    ASSERT_TRUE(same.ok()) << same << "\n" << describe(text);
    compacted += static_cast<int>(report.compact.compacted.size());
  }
  std::cout << spec << ": " << compacted << " buffers compacted in "
            << kTracesPerShape << " traces\n";
}

INSTANTIATE_TEST_SUITE_P(Operators, LowerProperty, ::testing::ValuesIn(kSpecs),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name;
                           for (const char* c = info.param; *c; ++c) {
                             name +=
                                 std::isalnum(static_cast<unsigned char>(*c))
                                     ? *c
                                     : '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace lathe
