// The remote runner against a real daemon on loopback (gRPC, token auth),
// in one process: simulated runners, so the test is about the traffic —
// every candidate answered exactly once, the next lease fetched while one is
// measured, and a lease fetched ahead given back when the runner stops.
#include "runner/remote/remote_runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "compiler/codegen/cpu_target.h"
#include "tests/support/temp_folder.h"
#include "tuner/service/compiler_hooks.h"
#include "tuner/service/daemon.h"
#include "tuner/service/server.h"

namespace lathe::runner {
namespace {

class RemoteRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    service::DaemonOptions options;
    options.compiler = service::CompilerHooks();
    options.db_path = dir_ + "/t.db";
    options.scratch_dir = dir_;
    options.log = false;
    options.lease_time = absl::Seconds(30);  // nothing may wait for an expiry
    daemon_ = service::Daemon::Start(options).value();
    rpc::ServerSecurity security;
    security.token = "test-token";
    server_ = service::Server::Start(*daemon_, "127.0.0.1:0", security,
                                     rpc::kMaxServiceMessageBytes)
                  .value();
    target_ = ParseTarget("llvm -num-threads=1")->ToString();
  }
  void TearDown() override {
    stop_.store(true);
    for (std::thread& t : runners_) t.join();
    server_->Shutdown();
    daemon_->Shutdown();
  }

  void StartRunner(const std::string& name, double simulate_ms, bool prefetch) {
    runners_.emplace_back([this, name, simulate_ms, prefetch] {
      RemoteRunnerOptions options;
      options.channel.address = absl::StrCat("127.0.0.1:", server_->port());
      options.channel.token = "test-token";
      options.name = name;
      options.target = target_;
      options.simulate_ms = simulate_ms;
      options.prefetch = prefetch;
      options.acquire_wait_s = 0.2;
      options.stop = &stop_;
      options.log = false;
      const absl::Status status = RunRemoteRunner(options);
      EXPECT_TRUE(status.ok()) << name << ": " << status;
    });
  }

  int64_t Enqueue() {
    service::WorkItem item;
    item.job = "job";
    item.simulated = true;
    item.request.set_target(target_);
    return daemon_->leases().Enqueue(std::move(item));
  }

  // The most leases one runner holds, polled until `want` or 20 s.
  int WaitForLeasesHeld(int want) {
    int most = 0;
    const absl::Time give_up = absl::Now() + absl::Seconds(20);
    while (most < want && absl::Now() < give_up) {
      for (const auto& [runner, leases] : daemon_->leases().LeasesByRunner()) {
        most = std::max(most, leases);
      }
      absl::SleepFor(absl::Milliseconds(1));
    }
    return most;
  }

  test_support::TempFolder folder_;
  const std::string dir_ = folder_.path();
  std::string target_;
  std::unique_ptr<service::Daemon> daemon_;
  std::unique_ptr<service::Server> server_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> runners_;
};

TEST_F(RemoteRunnerTest, EveryCandidateIsAnsweredOnceByPrefetchingRunners) {
  StartRunner("a", 2, true);
  StartRunner("b", 2, true);
  std::vector<int64_t> items;
  for (int i = 0; i < 40; ++i) items.push_back(Enqueue());
  for (int64_t item : items) {
    absl::StatusOr<proto::MeasureResult> result = daemon_->leases().Wait(item);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->status(), proto::MEASURE_OK);
  }
  const service::LeaseStats stats = daemon_->leases().Stats();
  EXPECT_EQ(stats.dropped_results, 0);
  EXPECT_EQ(stats.expired, 0);
  EXPECT_EQ(stats.queued, 0);
}

TEST_F(RemoteRunnerTest,
       FetchesTheNextLeaseWhileMeasuringAndGivesItBackWhenStopping) {
  for (int i = 0; i < 3; ++i) Enqueue();
  StartRunner("slow", 400, true);
  // One lease measured, the next in hand.
  ASSERT_EQ(WaitForLeasesHeld(2), 2);
  stop_.store(true);
  for (std::thread& t : runners_) t.join();
  runners_.clear();
  // The lease in hand went back to the queue at once: nothing is leased,
  // nothing had to expire, and the result of the measured one arrived.
  const service::LeaseStats stats = daemon_->leases().Stats();
  EXPECT_EQ(stats.leased, 0);
  EXPECT_EQ(stats.expired, 0);
  EXPECT_EQ(stats.dropped_results, 0);
  EXPECT_GE(stats.queued, 1);
  EXPECT_LE(stats.queued, 2);
}

TEST_F(RemoteRunnerTest, WithoutPrefetchARunnerHoldsOneLeaseAtATime) {
  std::vector<int64_t> items;
  for (int i = 0; i < 3; ++i) items.push_back(Enqueue());
  StartRunner("plain", 100, false);
  // Watched until all three are answered; with prefetch the second lease
  // is held during the whole first measurement.
  int most = 0;
  const absl::Time give_up = absl::Now() + absl::Seconds(20);
  while (daemon_->leases().JobCounts("job") != std::make_pair(0, 0) &&
         absl::Now() < give_up) {
    for (const auto& [runner, leases] : daemon_->leases().LeasesByRunner()) {
      most = std::max(most, leases);
    }
    absl::SleepFor(absl::Milliseconds(1));
  }
  for (int64_t item : items) EXPECT_TRUE(daemon_->leases().Wait(item).ok());
  EXPECT_EQ(most, 1);
}

}  // namespace
}  // namespace lathe::runner
