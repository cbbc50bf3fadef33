#include "runner/remote/remote_runner.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "proto/service.grpc.pb.h"
#include "rpc/channel.h"
#include "runner/remote/lease_courier.h"
#include "runner/remote/runner_connection.h"

namespace lathe::runner {
namespace {

// The fake time is the delay as it really passed (a sleep overshoots under
// load), so the dispatch benchmark can tell the delay from the dispatch.
proto::MeasureResult Simulate(double ms) {
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(
      std::chrono::microseconds(static_cast<int64_t>(ms * 1000)));
  const double slept_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
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
    // Stopping abandons the candidate being measured: its lease goes back
    // to the daemon at once instead of after the measurement (a hanging
    // candidate: its whole timeout).
    LocalRunnerOptions local_options = options.local;
    local_options.stop = options.stop;
    absl::StatusOr<std::unique_ptr<LocalRunner>> started =
        LocalRunner::Start(local_options);
    if (!started.ok()) return started.status();
    local = *std::move(started);
  }
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      rpc::MakeChannel(options.channel);
  if (!channel.ok()) return channel.status();
  RunnerConnection connection(options, *channel);
  if (absl::Status registered = connection.Register(); !registered.ok())
    return registered;
  LeaseCourier courier(connection, options.prefetch);
  absl::Status stopped_by;
  while (true) {
    absl::StatusOr<std::optional<proto::AcquireWorkResponse>> next =
        courier.Next();
    if (!next.ok()) {
      stopped_by = next.status();
      break;
    }
    if (!next->has_value()) break;  // stopping
    const proto::AcquireWorkResponse& work = **next;
    proto::ReportResultRequest report;
    report.set_runner_id(connection.runner_id());
    report.set_lease_id(work.lease_id());
    if (work.request().target() != options.target) {
      report.set_infrastructure_error(absl::StrCat(
          "target \"", work.request().target(), "\" is not this runner's"));
    } else if (local == nullptr) {
      *report.mutable_result() = Simulate(options.simulate_ms);
    } else {
      absl::StatusOr<proto::MeasureResult> result =
          local->Measure(work.request());
      if (result.ok()) {
        *report.mutable_result() = *std::move(result);
      } else if (absl::IsCancelled(result.status())) {
        report.set_release(true);  // given back unmeasured: not a failure
      } else {
        report.set_infrastructure_error(std::string(result.status().message()));
      }
    }
    if (!report.infrastructure_error().empty() && local != nullptr) {
      connection.Log(
          absl::StrCat("could not measure: ", report.infrastructure_error()));
    }
    courier.Report(std::move(report));
  }
  const absl::Status finished = courier.Finish();
  return stopped_by.ok() ? finished : stopped_by;
}

}  // namespace lathe::runner
