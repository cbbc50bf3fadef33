// A remote runner's connection to the tuner daemon: the RunnerService stub,
// the runner id the daemon gave it (registering again when a restarted
// daemon no longer knows it), the lease time, the back-off while the tuner
// is unreachable, and the progress lines. Shared by the runner's threads
// (runner/remote/remote_runner.cc, lease_courier.h, heartbeats.h).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "proto/service.grpc.pb.h"
#include "runner/remote/remote_runner.h"

namespace lathe::runner {

class RunnerConnection {
 public:
  RunnerConnection(const RemoteRunnerOptions& options,
                   std::shared_ptr<grpc::Channel> channel);

  bool Stopping() const;
  // A progress line on stderr (when options.log).
  void Log(const std::string& line) const;
  // Waits `delay_s` (doubling it for next time, up to 2 s); false when
  // stopping.
  bool Backoff(double& delay_s) const;

  // Registers, retrying while the tuner is unreachable. OK also when
  // stopped before it succeeded.
  absl::Status Register();

  std::string runner_id() const;
  double lease_s() const;
  proto::RunnerService::Stub& stub() { return *stub_; }
  const RemoteRunnerOptions& options() const { return options_; }

 private:
  const RemoteRunnerOptions& options_;
  std::unique_ptr<proto::RunnerService::Stub> stub_;
  mutable std::mutex mutex_;  // the runner id changes when registering again
  std::string runner_id_;
  double lease_s_ = 30;
};

}  // namespace lathe::runner
