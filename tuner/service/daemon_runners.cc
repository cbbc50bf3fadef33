// The Daemon's side for runners (daemon.h): registration, leases of work,
// heartbeats and results, and the runner list; jobs are in daemon.cc.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/untrusted_text.h"
#include "tuner/service/daemon.h"
#include "tuner/service/field_error.h"
#include "tuner/service/result_validation.h"

namespace lathe::service {
namespace {

// A target string with a long -mattr list, and then some; with the other
// fields' bounds (runner_registry.h), a runner's entry in the runner list
// stays under 2.5 KiB, so a list of RunnerRegistry::kDefaultMaxRunners fits
// a message.
constexpr size_t kMaxRunnerTargetBytes = 1024;
// Of a runner's failure message, in a log line (base/untrusted_text.h).
constexpr size_t kMaxLoggedTextBytes = 1024;

}  // namespace

std::vector<proto::RunnerInfo> Daemon::ListRunners() {
  return runners_.List(leases_.LeasesByRunner());
}

absl::StatusOr<proto::RegisterRunnerResponse> Daemon::RegisterRunner(
    const proto::RegisterRunnerRequest& given, const std::string& peer) {
  proto::RegisterRunnerRequest request = given;
  if (request.name().empty()) return FieldError("name", "empty");
  // Shown by `lathe runners` and in the daemon's log: no terminal control.
  if (request.name().size() > 256)
    return FieldError("name", "longer than 256 bytes");
  if (EscapedPrefix(request.name(), request.name().size()) != request.name()) {
    return FieldError("name",
                      "has control characters, backslashes or invalid UTF-8");
  }
  if (request.target().empty()) return FieldError("target", "empty");
  if (request.target().size() > kMaxRunnerTargetBytes) {
    return FieldError("target", absl::StrCat("longer than ",
                                             kMaxRunnerTargetBytes, " bytes"));
  }
  absl::StatusOr<Target> target =
      options_.compiler.parse_target(request.target());
  if (!target.ok()) return FieldError("target", target.status().message());
  request.set_target(target->ToString());
  absl::StatusOr<std::string> registered = runners_.Register(request, peer);
  if (!registered.ok()) return registered.status();
  const std::string id = *std::move(registered);
  Log(absl::StrCat("runner ", id, " (", request.name(), ", ", peer,
                   ") registered for \"", request.target(), "\"",
                   request.simulated() ? " (simulated)" : ""));
  proto::RegisterRunnerResponse response;
  response.set_runner_id(id);
  response.set_lease_s(absl::ToDoubleSeconds(options_.lease_time));
  return response;
}

absl::StatusOr<proto::AcquireWorkResponse> Daemon::AcquireWork(
    const proto::AcquireWorkRequest& request) {
  if (request.runner_id().empty()) return FieldError("runner_id", "empty");
  if (absl::Status st = runners_.CheckActive(request.runner_id()); !st.ok())
    return st;
  absl::StatusOr<proto::RunnerInfo> info = runners_.Get(request.runner_id());
  if (!info.ok()) return info.status();
  proto::AcquireWorkResponse response;
  response.set_lease_s(absl::ToDoubleSeconds(options_.lease_time));
  if (stopping_.load()) return response;
  const absl::Duration wait =
      std::min(absl::Seconds(std::max(0.0, request.wait_s())),
               options_.max_acquire_wait);
  std::optional<Lease> lease =
      request.prefetch() ? leases_.Prefetch(request.runner_id(), info->target(),
                                            info->simulated())
                         : leases_.Acquire(request.runner_id(), info->target(),
                                           info->simulated(), wait);
  if (!lease) return response;
  response.set_lease_id(lease->id);
  *response.mutable_request() = lease->work.request;
  response.set_job(lease->work.job);
  return response;
}

absl::StatusOr<proto::HeartbeatResponse> Daemon::Heartbeat(
    const proto::HeartbeatRequest& request) {
  if (request.runner_id().empty()) return FieldError("runner_id", "empty");
  if (absl::Status st = runners_.CheckActive(request.runner_id()); !st.ok())
    return st;
  proto::HeartbeatResponse response;
  for (const std::string& id :
       leases_.Heartbeat(request.runner_id(),
                         std::vector<std::string>(request.lease_ids().begin(),
                                                  request.lease_ids().end()))) {
    response.add_expired_lease_ids(id);
  }
  return response;
}

absl::StatusOr<proto::ReportResultResponse> Daemon::ReportResult(
    const proto::ReportResultRequest& request) {
  if (request.runner_id().empty()) return FieldError("runner_id", "empty");
  if (request.lease_id().empty()) return FieldError("lease_id", "empty");
  absl::StatusOr<proto::RunnerInfo> info = runners_.Get(request.runner_id());
  if (!info.ok()) return info.status();
  proto::ReportResultResponse response;
  bool failure = false;
  if (request.release()) {
    // Given back unmeasured: not the runner's failure, nothing to count.
    if (leases_.Return(request.runner_id(), request.lease_id()) ==
        ReportOutcome::kAccepted) {
      response.set_accepted(true);
    }
    return response;
  }
  if (!request.infrastructure_error().empty()) {
    if (leases_.Return(request.runner_id(), request.lease_id()) ==
        ReportOutcome::kDropped) {
      return response;
    }
    Log(absl::StrCat(
        "runner ", info->id(), " could not measure: ",
        EscapedPrefix(request.infrastructure_error(), kMaxLoggedTextBytes),
        "; the candidate is queued again"));
    failure = true;
  } else {
    // Checked whole before anything reaches the job: an ill-formed result
    // is refused (never committed), its candidate queued again for another
    // runner, and counted against this runner.
    if (absl::Status invalid = ValidateReportedResult(request.result());
        !invalid.ok()) {
      if (leases_.Return(request.runner_id(), request.lease_id()) ==
          ReportOutcome::kAccepted) {
        Log(absl::StrCat("refused a result of runner ", info->id(), ": ",
                         invalid.message(), "; the candidate is queued again"));
        if (runners_.RecordResult(request.runner_id(), /*failure=*/true,
                                  std::string(invalid.message()))) {
          Log(absl::StrCat("runner ", info->id(),
                           " quarantined after repeated failures (the last: ",
                           invalid.message(), ")"));
          leases_.ReleaseRunner(request.runner_id());
        }
      }
      return invalid;
    }
    proto::MeasureResult result = request.result();
    // Provenance is the daemon's word, not the runner's.
    result.set_runner(
        absl::StrCat(info->name(), info->simulated() ? " (simulated)" : ""));
    result.set_device(info->device());  // escaped at registration
    // Kept in the job's records and shown by db commands.
    result.set_error(EscapedPrefix(result.error(), kMaxReportedErrorBytes));
    if (leases_.Report(request.runner_id(), request.lease_id(), result) ==
        ReportOutcome::kDropped) {
      Log(absl::StrCat("dropped a result of runner ", info->id(),
                       ": its lease expired or is unknown"));
      return response;
    }
    response.set_accepted(true);
    // A candidate over the worker's memory limit is the job's failure, not
    // the runner's: a client must not get runners quarantined by asking
    // for more than they hold.
    failure = (result.status() == proto::MEASURE_BUILD_ERROR ||
               result.status() == proto::MEASURE_RUN_ERROR) &&
              !result.over_limit();
  }
  const std::string why = !request.infrastructure_error().empty()
                              ? request.infrastructure_error()
                              : request.result().error();
  if (runners_.RecordResult(request.runner_id(), failure, why)) {
    Log(absl::StrCat("runner ", info->id(), " (", info->name(),
                     ") quarantined after repeated failures; it gets no more "
                     "work (the last: ",
                     runners_.LastFailure(request.runner_id()), ")"));
    leases_.ReleaseRunner(request.runner_id());
  }
  if (request.acquire_wait_s() > 0 || request.prefetch()) {
    proto::AcquireWorkRequest acquire;
    acquire.set_runner_id(request.runner_id());
    acquire.set_wait_s(request.acquire_wait_s());
    acquire.set_prefetch(request.prefetch());
    absl::StatusOr<proto::AcquireWorkResponse> next = AcquireWork(acquire);
    // A quarantined runner learns it at its next AcquireWork.
    if (next.ok()) *response.mutable_next() = *std::move(next);
  }
  return response;
}

}  // namespace lathe::service
