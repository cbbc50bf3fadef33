// A measuring remote runner against a real daemon on loopback: the daemon
// names the queued candidates each lease's runner should build ahead
// (tuner/service/lease_manager.h, "Building ahead"), and the runner's worker
// has them built when their own leases come.
#include <gtest/gtest.h>
#include <sched.h>

#include <vector>

#include "tests/runner/remote/measuring_service.h"
#include "tests/runner/schedule_requests.h"

namespace lathe::runner {
namespace {

int AllowedCpus() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 1;
  return CPU_COUNT(&allowed);
}

// Four programs queued before a runner whose kernels use every CPU
// connects: the worker builds the three it is told of beside the first
// one's build, so those three arrive built (runner/build_ahead.h). With
// `build_ahead_hints` 0, none does.
std::vector<proto::MeasureResult> MeasureFourQueuedPrograms(
    int build_ahead_hints) {
  test_support::MeasuringService service(build_ahead_hints);
  std::vector<test_support::ScheduleRequest> programs =
      test_support::FourSchedules("matmul:M=36,N=28,K=20", AllowedCpus());
  std::vector<int64_t> items;
  for (const test_support::ScheduleRequest& p : programs)
    items.push_back(service.Enqueue(p.request));
  service.StartRunner("measuring", programs[0].request.target());
  std::vector<proto::MeasureResult> results;
  for (size_t i = 0; i < items.size(); ++i) {
    absl::StatusOr<proto::MeasureResult> result =
        service.daemon().leases().Wait(items[i]);
    EXPECT_TRUE(result.ok()) << result.status();
    if (!result.ok()) break;
    EXPECT_EQ(result->status(), proto::MEASURE_OK) << result->error();
    EXPECT_EQ(result->structural_hash(), programs[i].structural_hash);
    results.push_back(*std::move(result));
  }
  return results;
}

TEST(RemoteBuildAhead, TheRunnerFindsTheProgramsItWasToldOfBuilt) {
  if (AllowedCpus() < 2)
    GTEST_SKIP() << "needs 2 CPUs: builds ahead go beside the runner's own";
  std::vector<proto::MeasureResult> results = MeasureFourQueuedPrograms(3);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_FALSE(results[0].built_ahead());
  for (int i = 1; i < 4; ++i)
    EXPECT_TRUE(results[i].built_ahead()) << "program " << i;
}

TEST(RemoteBuildAhead, WithoutHintsEveryProgramIsBuiltWhenItsLeaseComes) {
  if (AllowedCpus() < 2) GTEST_SKIP() << "needs 2 CPUs, as the test above";
  std::vector<proto::MeasureResult> results = MeasureFourQueuedPrograms(0);
  ASSERT_EQ(results.size(), 4u);
  for (int i = 0; i < 4; ++i)
    EXPECT_FALSE(results[i].built_ahead()) << "program " << i;
}

}  // namespace
}  // namespace lathe::runner
