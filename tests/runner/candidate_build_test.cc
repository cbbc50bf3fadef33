// Tests of runner/candidate_build.h: what a build gives, how it fails, and
// builds on several threads at once.
#include "runner/candidate_build.h"

#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/runner/schedule_requests.h"

namespace lathe::runner {
namespace {

using test_support::DefaultScheduleRequest;
using test_support::ScheduleRequest;
using test_support::WithBadSplit;
using ::testing::HasSubstr;

constexpr char kSpec[] = "matmul:M=40,N=24,K=16";

TEST(BuildForMeasurement, BuildsTheKernelOfTheTrace) {
  ScheduleRequest r = DefaultScheduleRequest(kSpec);
  CandidateBuild build = BuildForMeasurement(r.request);
  ASSERT_TRUE(build.ok()) << build.failure.error();
  EXPECT_EQ(build.structural_hash, r.structural_hash);
  ASSERT_TRUE(build.workload.has_value());
  EXPECT_EQ(build.workload->CanonicalForm(), r.request.workload());
  EXPECT_NE(build.kernel->function(), nullptr);
  EXPECT_EQ(build.kernel->num_args(), 3);
  EXPECT_GT(build.build_ms, 0);
  EXPECT_FALSE(build.built_ahead);
}

TEST(BuildForMeasurement, FailuresSayWhatFailed) {
  ScheduleRequest r = DefaultScheduleRequest(kSpec);
  struct Case {
    proto::MeasureRequest request;
    std::string error;
  };
  std::vector<Case> cases(4, {r.request, ""});
  cases[0].request.set_workload("matmul:M=0,N=4,K=4");
  cases[0].error = "workload: ";
  cases[1].request.set_target("llvm -num-threads=zero");
  cases[1].error = "target: ";
  cases[2].request = WithBadSplit(r.request);
  cases[2].error = "factor 0 is not positive";
  cases[3].request.mutable_trace()->mutable_instructions(0)->set_kind(
      "no_such_primitive");
  cases[3].error = "no_such_primitive";
  for (const Case& c : cases) {
    CandidateBuild build = BuildForMeasurement(c.request);
    EXPECT_FALSE(build.ok());
    EXPECT_FALSE(build.kernel.has_value());
    EXPECT_EQ(build.failure.status(), proto::MEASURE_BUILD_ERROR)
        << build.failure.error();
    EXPECT_THAT(build.failure.error(), HasSubstr(c.error));
  }
}

// Two threads building the same program at once get one kernel (the worker
// knows kernels by address); different programs build side by side.
TEST(BuildForMeasurement, BuildsOnSeveralThreadsAtOnce) {
  const std::vector<ScheduleRequest> requests = {
      DefaultScheduleRequest("matmul:M=33,N=20,K=12", 1, 4),
      DefaultScheduleRequest("matmul:M=33,N=20,K=12", 1, 4),
      DefaultScheduleRequest("matmul:M=33,N=20,K=12", 1, 8),
      DefaultScheduleRequest("matmul:M=33,N=20,K=12", 1, 8)};
  std::vector<CandidateBuild> builds(requests.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < requests.size(); ++i) {
    threads.emplace_back(
        [&, i] { builds[i] = BuildForMeasurement(requests[i].request); });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < builds.size(); ++i) {
    ASSERT_TRUE(builds[i].ok()) << builds[i].failure.error();
    EXPECT_EQ(builds[i].structural_hash, requests[i].structural_hash);
  }
  EXPECT_NE(requests[0].structural_hash, requests[2].structural_hash);
  EXPECT_EQ(builds[0].kernel->function(), builds[1].kernel->function());
  EXPECT_EQ(builds[2].kernel->function(), builds[3].kernel->function());
  EXPECT_NE(builds[0].kernel->function(), builds[2].kernel->function());
}

}  // namespace
}  // namespace lathe::runner
