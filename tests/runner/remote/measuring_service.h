// A real daemon and gRPC server on loopback (token auth) with measuring
// remote runners, each with its own worker process (lathe-runner-worker),
// on threads of this test process; for the tests of what a measuring runner
// does with the daemon's work.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runner/remote/remote_runner.h"
#include "tests/support/temp_folder.h"
#include "tuner/service/compiler_hooks.h"
#include "tuner/service/daemon.h"
#include "tuner/service/server.h"

#ifndef LATHE_RUNNER_WORKER
#error "LATHE_RUNNER_WORKER: the path of lathe-runner-worker"
#endif

namespace lathe::runner::test_support {

class MeasuringService {
 public:
  explicit MeasuringService(
      int build_ahead_hints = service::LeaseManager::kDefaultBuildAheadHints) {
    service::DaemonOptions options;
    options.compiler = service::CompilerHooks();
    options.db_path = folder_.path() + "/t.db";
    options.scratch_dir = folder_.path();
    options.log = false;
    options.lease_time = absl::Seconds(60);  // nothing may wait for an expiry
    options.build_ahead_hints = build_ahead_hints;
    daemon_ = service::Daemon::Start(options).value();
    rpc::ServerSecurity security;
    security.token = "test-token";
    server_ = service::Server::Start(*daemon_, "127.0.0.1:0", security,
                                     rpc::kMaxServiceMessageBytes)
                  .value();
  }
  ~MeasuringService() {
    StopRunners();
    server_->Shutdown();
    daemon_->Shutdown();
  }

  service::Daemon& daemon() { return *daemon_; }

  int64_t Enqueue(const proto::MeasureRequest& request) {
    service::WorkItem item;
    item.job = "job";
    item.request = request;
    return daemon_->leases().Enqueue(std::move(item));
  }

  // A runner of `target` with a 30 s timeout per candidate.
  void StartRunner(const std::string& name, const std::string& target) {
    runners_.emplace_back([this, name, target] {
      RemoteRunnerOptions r;
      r.channel.address = absl::StrCat("127.0.0.1:", server_->port());
      r.channel.token = "test-token";
      r.name = name;
      r.target = target;
      r.local.worker_argv = {LATHE_RUNNER_WORKER};
      r.local.timeout_s = 30;
      r.local.memory_limit_bytes = int64_t{2} << 30;
      r.acquire_wait_s = 0.2;
      r.stop = &stop_;
      r.log = false;
      const absl::Status status = RunRemoteRunner(r);
      EXPECT_TRUE(status.ok()) << name << ": " << status;
    });
  }

  // Sets the runners' stop flag and waits for them to return.
  void StopRunners() {
    stop_.store(true);
    for (std::thread& t : runners_) t.join();
    runners_.clear();
  }

 private:
  lathe::test_support::TempFolder folder_;
  std::unique_ptr<service::Daemon> daemon_;
  std::unique_ptr<service::Server> server_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> runners_;
};

}  // namespace lathe::runner::test_support
