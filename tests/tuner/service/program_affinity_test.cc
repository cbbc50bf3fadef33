#include "tuner/service/program_affinity.h"

#include <gtest/gtest.h>

#include <string>

namespace lathe::service {
namespace {

proto::MeasureRequest Request(
    const std::string& trace_mark, const std::string& workload = "w",
    const std::string& target = "llvm -num-threads=1") {
  proto::MeasureRequest request;
  request.set_workload(workload);
  request.set_target(target);
  request.mutable_trace()->set_workload(trace_mark);
  return request;
}

TEST(ProgramAffinity, AProgramIsNamedByWorkloadTargetAndTraceOnly) {
  const proto::MeasureRequest a = Request("t1");
  proto::MeasureRequest timed_otherwise = a;
  timed_otherwise.set_min_time_s(0.5);
  timed_otherwise.set_check_seed(9);
  timed_otherwise.add_build_ahead()->set_workload("t2");
  EXPECT_EQ(ProgramAffinity::KeyOf(a), ProgramAffinity::KeyOf(timed_otherwise));
  EXPECT_NE(ProgramAffinity::KeyOf(a), ProgramAffinity::KeyOf(Request("t2")));
  EXPECT_NE(ProgramAffinity::KeyOf(a),
            ProgramAffinity::KeyOf(Request("t1", "v")));
  EXPECT_NE(ProgramAffinity::KeyOf(a),
            ProgramAffinity::KeyOf(Request("t1", "w", "llvm -num-threads=2")));
  proto::MeasureRequest default_schedule = a;
  default_schedule.clear_trace();
  proto::MeasureRequest empty_trace = default_schedule;
  empty_trace.mutable_trace();
  EXPECT_NE(ProgramAffinity::KeyOf(default_schedule),
            ProgramAffinity::KeyOf(empty_trace));
}

TEST(ProgramAffinity, RemembersTheLatestRunnerAndForgetsARunnerWhole) {
  ProgramAffinity affinity;
  const uint64_t x = ProgramAffinity::KeyOf(Request("x"));
  const uint64_t y = ProgramAffinity::KeyOf(Request("y"));
  EXPECT_EQ(affinity.RunnerOf(x), "");
  affinity.Remember(x, "r");
  affinity.Remember(y, "r");
  EXPECT_EQ(affinity.RunnerOf(x), "r");
  affinity.Remember(x, "s");
  EXPECT_EQ(affinity.RunnerOf(x), "s");
  affinity.Forget("r");
  EXPECT_EQ(affinity.RunnerOf(x), "s");
  EXPECT_EQ(affinity.RunnerOf(y), "");
  affinity.Forget("s");
  EXPECT_EQ(affinity.size(), 0u);
}

TEST(ProgramAffinity, ForgetsTheLeastRecentlyRememberedPastItsCapacity) {
  ProgramAffinity affinity(/*capacity=*/3);
  for (uint64_t p = 1; p <= 3; ++p) affinity.Remember(p, "r");
  affinity.Remember(1, "s");  // 1 is now the most recent
  affinity.Remember(4, "r");
  EXPECT_EQ(affinity.size(), 3u);
  EXPECT_EQ(affinity.RunnerOf(2), "");
  EXPECT_EQ(affinity.RunnerOf(1), "s");
  EXPECT_EQ(affinity.RunnerOf(3), "r");
  EXPECT_EQ(affinity.RunnerOf(4), "r");
  // Remembering one program over and over keeps the others.
  for (int i = 0; i < 100; ++i) affinity.Remember(4, "r");
  EXPECT_EQ(affinity.RunnerOf(1), "s");
  EXPECT_EQ(affinity.RunnerOf(3), "r");
}

}  // namespace
}  // namespace lathe::service
