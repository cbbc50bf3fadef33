#include "runner/remote/runner_connection.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/log_line.h"
#include "rpc/channel.h"

namespace lathe::runner {

RunnerConnection::RunnerConnection(const RemoteRunnerOptions& options,
                                   std::shared_ptr<grpc::Channel> channel)
    : options_(options), stub_(proto::RunnerService::NewStub(channel)) {}

bool RunnerConnection::Stopping() const {
  return options_.stop != nullptr && options_.stop->load();
}

void RunnerConnection::Log(const std::string& line) const {
  if (options_.log) LogLine("lathe runner", line);
}

bool RunnerConnection::Backoff(double& delay_s) const {
  for (double waited = 0; waited < delay_s; waited += 0.05) {
    if (Stopping()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  delay_s = std::min(delay_s * 2, 2.0);
  return !Stopping();
}

absl::Status RunnerConnection::Register() {
  proto::RegisterRunnerRequest request;
  request.set_name(options_.name);
  request.set_target(options_.target);
  request.set_device(options_.device);
  request.set_lathe_version(options_.lathe_version);
  request.set_simulated(options_.simulate_ms > 0);
  request.set_memory_limit_bytes(std::max<int64_t>(
      0, options_.simulate_ms > 0 ? 0 : options_.local.memory_limit_bytes));
  double delay_s = 0.1;
  bool said = false;
  while (true) {
    grpc::ClientContext context;
    rpc::PrepareContext(context, options_.channel.token, 10);
    proto::RegisterRunnerResponse response;
    const grpc::Status status =
        stub_->RegisterRunner(&context, request, &response);
    if (status.ok()) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        runner_id_ = response.runner_id();
        lease_s_ = response.lease_s() > 0 ? response.lease_s() : 30;
      }
      Log(absl::StrCat("registered with the tuner at ",
                       options_.channel.address, " as ", response.runner_id(),
                       " for \"", options_.target, "\"",
                       options_.simulate_ms > 0 ? " (simulated)" : ""));
      return absl::OkStatus();
    }
    const absl::Status error = rpc::FromGrpc(status, options_.channel.address);
    if (!rpc::IsTransient(status)) return error;
    if (!said) Log(absl::StrCat(error.message(), "; retrying"));
    said = true;
    if (!Backoff(delay_s)) return absl::OkStatus();
  }
}

std::string RunnerConnection::runner_id() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return runner_id_;
}

double RunnerConnection::lease_s() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lease_s_;
}

}  // namespace lathe::runner
