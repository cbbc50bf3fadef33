// A measuring remote runner stopped while it measures: the candidate is
// abandoned (its worker killed) and its lease given back at once, instead
// of after the measurement; a hanging candidate would hold it for its
// whole timeout.
#include <gtest/gtest.h>

#include <chrono>

#include "absl/time/clock.h"
#include "tests/runner/remote/measuring_service.h"
#include "tests/runner/schedule_requests.h"

namespace lathe::runner {
namespace {

TEST(RemoteRunnerStop, AStoppedRunnerGivesBackTheCandidateItMeasures) {
  test_support::MeasuringService service;
  test_support::ScheduleRequest program =
      test_support::DefaultScheduleRequest("matmul:M=36,N=28,K=20");
  proto::MeasureRequest hang = program.request;
  hang.set_inject_fault("hang");
  service.Enqueue(hang);
  service.StartRunner("measuring", hang.target());
  // Leased: the worker builds it, then hangs.
  const absl::Time give_up = absl::Now() + absl::Seconds(20);
  while (service.daemon().leases().Stats().leased < 1 &&
         absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_EQ(service.daemon().leases().Stats().leased, 1);
  const auto start = std::chrono::steady_clock::now();
  service.StopRunners();
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_LT(took, 10)
      << "the runner waited for the hanging candidate (timeout 30 s)";
  const service::LeaseStats stats = service.daemon().leases().Stats();
  EXPECT_EQ(stats.leased, 0);
  EXPECT_EQ(stats.queued, 1);  // released, for another runner
  EXPECT_EQ(stats.expired, 0);
  EXPECT_EQ(stats.dropped_results, 0);
}

}  // namespace
}  // namespace lathe::runner
