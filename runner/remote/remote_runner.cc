#include "runner/remote/remote_runner.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "proto/service.grpc.pb.h"

namespace lathe::runner {
namespace {

#define LATHE_REMOTE_RETURN_IF_ERROR(expr)     \
  do {                                         \
    const absl::Status status_ = (expr);       \
    if (!status_.ok()) return status_;         \
  } while (false)

class Connection {
 public:
  Connection(const RemoteRunnerOptions& options, std::shared_ptr<grpc::Channel> channel)
      : options_(options), stub_(proto::RunnerService::NewStub(channel)) {}

  bool Stopping() const { return options_.stop != nullptr && options_.stop->load(); }

  void Log(const std::string& line) const {
    if (!options_.log) return;
    std::fprintf(stderr, "%s lathe runner: %s\n",
                 absl::FormatTime("%H:%M:%S", absl::Now(), absl::UTCTimeZone()).c_str(),
                 line.c_str());
    std::fflush(stderr);
  }

  // Waits a little before the next try; false when stopping.
  bool Backoff(double& delay_s) {
    for (double waited = 0; waited < delay_s; waited += 0.05) {
      if (Stopping()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    delay_s = std::min(delay_s * 2, 2.0);
    return !Stopping();
  }

  // Registers, retrying while the tuner is unreachable.
  absl::Status Register() {
    proto::RegisterRunnerRequest request;
    request.set_name(options_.name);
    request.set_target(options_.target);
    request.set_device(options_.device);
    request.set_lathe_version(options_.lathe_version);
    request.set_simulated(options_.simulate_ms > 0);
    double delay_s = 0.1;
    bool said = false;
    while (true) {
      grpc::ClientContext context;
      PrepareContext(context, options_.channel.token, 10);
      proto::RegisterRunnerResponse response;
      const grpc::Status status = stub_->RegisterRunner(&context, request, &response);
      if (status.ok()) {
        {
          std::lock_guard<std::mutex> lock(mutex_);
          runner_id_ = response.runner_id();
          lease_s_ = response.lease_s() > 0 ? response.lease_s() : 30;
        }
        Log(absl::StrCat("registered with the tuner at ", options_.channel.address, " as ",
                         response.runner_id(), " for \"", options_.target, "\"",
                         options_.simulate_ms > 0 ? " (simulated)" : ""));
        return absl::OkStatus();
      }
      const absl::Status error = FromGrpc(status, options_.channel.address);
      if (status.error_code() != grpc::StatusCode::UNAVAILABLE &&
          status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
        return error;
      }
      if (!said) Log(absl::StrCat(error.message(), "; retrying"));
      said = true;
      if (!Backoff(delay_s)) return absl::OkStatus();
    }
  }

  // Read by the heartbeat thread while the main thread may register again.
  std::string runner_id() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return runner_id_;
  }
  double lease_s() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return lease_s_;
  }
  proto::RunnerService::Stub& stub() { return *stub_; }
  const RemoteRunnerOptions& options() const { return options_; }

 private:
  const RemoteRunnerOptions& options_;
  std::unique_ptr<proto::RunnerService::Stub> stub_;
  mutable std::mutex mutex_;
  std::string runner_id_;
  double lease_s_ = 30;
};

// Renews the lease being measured while the measurement runs.
class Heartbeats {
 public:
  explicit Heartbeats(Connection& connection) : connection_(connection) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~Heartbeats() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void Hold(const std::string& lease) {
    std::lock_guard<std::mutex> lock(mutex_);
    lease_ = lease;
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!done_) {
      const auto period = std::chrono::milliseconds(
          static_cast<int64_t>(std::max(0.05, connection_.lease_s() / 3) * 1000));
      wake_.wait_for(lock, period, [this] { return done_; });
      if (done_ || lease_.empty()) continue;
      proto::HeartbeatRequest request;
      request.set_runner_id(connection_.runner_id());
      request.add_lease_ids(lease_);
      lock.unlock();
      grpc::ClientContext context;
      PrepareContext(context, connection_.options().channel.token, 5);
      proto::HeartbeatResponse response;
      const grpc::Status status = connection_.stub().Heartbeat(&context, request, &response);
      if (status.ok() && response.expired_lease_ids_size() > 0) {
        connection_.Log(absl::StrCat("lease ", response.expired_lease_ids(0),
                                     " expired; its result will be dropped"));
      }
      lock.lock();
    }
  }

  Connection& connection_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string lease_;
  bool done_ = false;
  std::thread thread_;
};

// The fake time is the delay as it really passed (a sleep overshoots under
// load), so the dispatch benchmark can tell the delay from the dispatch.
proto::MeasureResult Simulate(double ms) {
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(ms * 1000)));
  const double slept_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  proto::MeasureResult result;
  result.set_status(proto::MEASURE_OK);
  result.add_times_s(slept_s);
  result.set_run_ms(slept_s * 1e3);
  result.set_error("simulated (dispatch benchmark): no measurement was made");
  return result;
}

}  // namespace

absl::Status RunRemoteRunner(const RemoteRunnerOptions& options) {
  if (options.target.empty()) return absl::InvalidArgumentError("no target");
  if (options.name.empty()) return absl::InvalidArgumentError("no runner name");
  std::unique_ptr<LocalRunner> local;
  if (options.simulate_ms <= 0) {
    absl::StatusOr<std::unique_ptr<LocalRunner>> started = LocalRunner::Start(options.local);
    if (!started.ok()) return started.status();
    local = *std::move(started);
  }
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeChannel(options.channel);
  if (!channel.ok()) return channel.status();
  Connection connection(options, *channel);
  LATHE_REMOTE_RETURN_IF_ERROR(connection.Register());
  Heartbeats heartbeats(connection);
  double delay_s = 0.1;
  bool unreachable = false;
  // Work handed out with the answer to the last report.
  proto::AcquireWorkResponse next;
  while (!connection.Stopping()) {
    proto::AcquireWorkResponse work;
    grpc::Status status;
    if (!next.lease_id().empty()) {
      work.Swap(&next);
      next.Clear();
    } else {
      proto::AcquireWorkRequest acquire;
      acquire.set_runner_id(connection.runner_id());
      acquire.set_wait_s(options.acquire_wait_s);
      grpc::ClientContext context;
      PrepareContext(context, options.channel.token, options.acquire_wait_s + 10);
      status = connection.stub().AcquireWork(&context, acquire, &work);
    }
    if (!status.ok()) {
      const absl::Status error = FromGrpc(status, options.channel.address);
      switch (status.error_code()) {
        case grpc::StatusCode::UNAVAILABLE:
        case grpc::StatusCode::DEADLINE_EXCEEDED:
          if (!unreachable) connection.Log(absl::StrCat(error.message(), "; retrying"));
          unreachable = true;
          if (!connection.Backoff(delay_s)) return absl::OkStatus();
          continue;
        case grpc::StatusCode::NOT_FOUND:
          // A new daemon: it does not know this runner.
          connection.Log("the tuner does not know this runner (restarted?); registering again");
          LATHE_REMOTE_RETURN_IF_ERROR(connection.Register());
          continue;
        default:
          return error;
      }
    }
    if (unreachable) connection.Log("the tuner is back");
    unreachable = false;
    delay_s = 0.1;
    if (work.lease_id().empty()) continue;  // nothing to do yet

    heartbeats.Hold(work.lease_id());
    proto::ReportResultRequest report;
    report.set_runner_id(connection.runner_id());
    report.set_lease_id(work.lease_id());
    report.set_acquire_wait_s(options.acquire_wait_s);
    if (work.request().target() != options.target) {
      report.set_infrastructure_error(absl::StrCat("target \"", work.request().target(),
                                                   "\" is not this runner's"));
    } else if (local == nullptr) {
      *report.mutable_result() = Simulate(options.simulate_ms);
    } else {
      absl::StatusOr<proto::MeasureResult> result = local->Measure(work.request());
      if (result.ok()) {
        *report.mutable_result() = *std::move(result);
      } else {
        report.set_infrastructure_error(std::string(result.status().message()));
      }
    }
    heartbeats.Hold("");
    // Reported until the tuner answers or the lease is surely gone.
    const absl::Time give_up = absl::Now() + absl::Seconds(connection.lease_s());
    double report_delay_s = 0.1;
    while (true) {
      grpc::ClientContext report_context;
      PrepareContext(report_context, options.channel.token, options.acquire_wait_s + 10);
      proto::ReportResultResponse response;
      const grpc::Status sent = connection.stub().ReportResult(&report_context, report, &response);
      if (sent.ok()) {
        if (!response.accepted()) connection.Log("the tuner dropped a result (its lease had expired)");
        next = std::move(*response.mutable_next());
        break;
      }
      if (sent.error_code() == grpc::StatusCode::UNAVAILABLE && absl::Now() < give_up) {
        if (!connection.Backoff(report_delay_s)) return absl::OkStatus();
        continue;
      }
      if (sent.error_code() == grpc::StatusCode::UNAVAILABLE ||
          sent.error_code() == grpc::StatusCode::NOT_FOUND) {
        break;  // the lease is gone with the daemon that gave it
      }
      return FromGrpc(sent, options.channel.address);
    }
    if (!report.infrastructure_error().empty() && local != nullptr) {
      connection.Log(absl::StrCat("could not measure: ", report.infrastructure_error()));
    }
  }
  return absl::OkStatus();
}

}  // namespace lathe::runner
