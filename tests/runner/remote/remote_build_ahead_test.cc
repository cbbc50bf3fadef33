// A measuring remote runner against a real daemon on loopback: the daemon
// names the queued candidates each lease's runner should build ahead
// (tuner/service/lease_manager.h, "Building ahead"), and the runner's worker
// has them built when their own leases come.
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runner/remote/remote_runner.h"
#include "tests/runner/schedule_requests.h"
#include "tests/support/temp_folder.h"
#include "tuner/service/daemon.h"
#include "tuner/service/server.h"

#ifndef LATHE_RUNNER_WORKER
#error "LATHE_RUNNER_WORKER: the path of lathe-runner-worker"
#endif

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
std::vector<proto::MeasureResult> MeasureFourQueuedPrograms(int build_ahead_hints) {
  const int cpus = AllowedCpus();
  lathe::test_support::TempFolder folder;
  service::DaemonOptions options;
  options.db_path = folder.path() + "/t.db";
  options.scratch_dir = folder.path();
  options.log = false;
  options.lease_time = absl::Seconds(60);
  options.build_ahead_hints = build_ahead_hints;
  std::unique_ptr<service::Daemon> daemon = service::Daemon::Start(options).value();
  service::ServerSecurity security;
  security.token = "test-token";
  std::unique_ptr<service::Server> server =
      service::Server::Start(*daemon, "127.0.0.1:0", security, kMaxServiceMessageBytes).value();

  std::vector<test_support::ScheduleRequest> programs =
      test_support::FourSchedules("matmul:M=36,N=28,K=20", cpus);
  std::vector<int64_t> items;
  for (const test_support::ScheduleRequest& p : programs) {
    service::WorkItem item;
    item.job = "job";
    item.request = p.request;
    items.push_back(daemon->leases().Enqueue(std::move(item)));
  }

  std::atomic<bool> stop{false};
  std::thread runner([&] {
    RemoteRunnerOptions r;
    r.channel.address = absl::StrCat("127.0.0.1:", server->port());
    r.channel.token = "test-token";
    r.name = "measuring";
    r.target = programs[0].request.target();
    r.local.worker_argv = {LATHE_RUNNER_WORKER};
    r.local.timeout_s = 30;
    r.local.memory_limit_bytes = int64_t{2} << 30;
    r.acquire_wait_s = 0.2;
    r.stop = &stop;
    r.log = false;
    const absl::Status status = RunRemoteRunner(r);
    EXPECT_TRUE(status.ok()) << status;
  });
  std::vector<proto::MeasureResult> results;
  for (size_t i = 0; i < items.size(); ++i) {
    absl::StatusOr<proto::MeasureResult> result = daemon->leases().Wait(items[i]);
    EXPECT_TRUE(result.ok()) << result.status();
    if (!result.ok()) break;
    EXPECT_EQ(result->status(), proto::MEASURE_OK) << result->error();
    EXPECT_EQ(result->structural_hash(), programs[i].structural_hash);
    results.push_back(*std::move(result));
  }
  stop.store(true);
  runner.join();
  server->Shutdown();
  daemon->Shutdown();
  return results;
}

TEST(RemoteBuildAhead, TheRunnerFindsTheProgramsItWasToldOfBuilt) {
  if (AllowedCpus() < 2) GTEST_SKIP() << "needs 2 CPUs: builds ahead go beside the runner's own";
  std::vector<proto::MeasureResult> results = MeasureFourQueuedPrograms(3);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_FALSE(results[0].built_ahead());
  for (int i = 1; i < 4; ++i) EXPECT_TRUE(results[i].built_ahead()) << "program " << i;
}

TEST(RemoteBuildAhead, WithoutHintsEveryProgramIsBuiltWhenItsLeaseComes) {
  if (AllowedCpus() < 2) GTEST_SKIP() << "needs 2 CPUs, as the test above";
  std::vector<proto::MeasureResult> results = MeasureFourQueuedPrograms(0);
  ASSERT_EQ(results.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(results[i].built_ahead()) << "program " << i;
}

}  // namespace
}  // namespace lathe::runner
