#include "runner/local_runner.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "base/clock_duration.h"
#include "base/status_macros.h"
#include "runner/worker_process.h"
#include "runner/worker_protocol.h"

namespace lathe::runner {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsUntil(Clock::time_point deadline) {
  return std::max(
      0.0, std::chrono::duration<double>(deadline - Clock::now()).count());
}

proto::MeasureResult Ended(proto::MeasureStatus status,
                           absl::string_view error) {
  proto::MeasureResult result;
  result.set_status(status);
  result.set_error(std::string(error));
  return result;
}

class LocalRunnerImpl : public LocalRunner {
 public:
  explicit LocalRunnerImpl(const LocalRunnerOptions& options)
      : options_(options) {}

  absl::Status StartWorker() {
    WorkerProcessOptions spawn;
    spawn.argv = options_.worker_argv;
    spawn.memory_limit_bytes = options_.memory_limit_bytes;
    spawn.cpus = options_.cpus;
    absl::StatusOr<std::unique_ptr<WorkerProcess>> worker =
        WorkerProcess::Spawn(spawn);
    if (!worker.ok()) return worker.status();
    // The hello proves the program is a worker of this protocol: a program
    // that is not (or a `lathe` without the subcommand) fails here, not as
    // a RUN_ERROR of every candidate.
    absl::StatusOr<std::string> hello =
        (*worker)->Receive(options_.startup_timeout_s);
    const std::string& program = options_.worker_argv[0];
    if (!hello.ok()) {
      return absl::UnavailableError(absl::StrCat(
          "worker ", program, " did not start: ", hello.status().message()));
    }
    if (*hello != kWorkerHello) {
      return absl::UnavailableError(absl::StrCat(
          "worker ", program, " does not speak the measure protocol (said \"",
          absl::CEscape(hello->substr(0, 40)), "\")"));
    }
    worker_ = *std::move(worker);
    return absl::OkStatus();
  }

  absl::StatusOr<proto::MeasureResult> Measure(
      const proto::MeasureRequest& request) override {
    std::lock_guard<std::mutex> lock(mutex_);
    proto::MeasureRequest limited = request;
    limited.set_timeout_s(options_.timeout_s);
    const std::string bytes = limited.SerializeAsString();
    const std::string timed_out =
        absl::StrFormat("timed out after %.1f s", options_.timeout_s);
    Clock::time_point deadline;
    // 1. Hand the request to a live worker. One that died before it took
    //    the request (killed between candidates, found out only now) is
    //    replaced once, and the candidate is not blamed for it.
    for (int attempt = 0;; ++attempt) {
      if (worker_ == nullptr) LATHE_RETURN_IF_ERROR(StartWorker());
      worker_->ClearStderrTail();
      deadline = Clock::now() + ClockDuration(options_.timeout_s);
      absl::Status sent = worker_->Send(bytes, options_.timeout_s);
      absl::StatusOr<std::string> ack =
          sent.ok() ? worker_->Receive(SecondsUntil(deadline), options_.stop)
                    : sent;
      if (ack.ok() && ack->empty()) break;
      worker_.reset();
      if (absl::IsCancelled(ack.status())) return Abandoned();
      if (ack.ok()) {
        return Ended(proto::MEASURE_RUN_ERROR,
                     "worker: no acknowledgement of the request");
      }
      if (attempt == 0 && absl::IsUnavailable(ack.status())) continue;
      return absl::IsDeadlineExceeded(ack.status())
                 ? Ended(proto::MEASURE_TIMEOUT, timed_out)
                 : Ended(proto::MEASURE_RUN_ERROR, ack.status().message());
    }
    // 2. Its answer, or how it ended.
    absl::StatusOr<std::string> reply =
        worker_->Receive(SecondsUntil(deadline), options_.stop);
    if (!reply.ok()) {
      worker_.reset();
      if (absl::IsCancelled(reply.status())) return Abandoned();
      return absl::IsDeadlineExceeded(reply.status())
                 ? Ended(proto::MEASURE_TIMEOUT, timed_out)
                 : Ended(proto::MEASURE_RUN_ERROR, reply.status().message());
    }
    proto::MeasureResult result;
    if (!result.ParseFromString(*reply)) {
      worker_.reset();
      return Ended(proto::MEASURE_RUN_ERROR,
                   "worker: the reply is not a MeasureResult");
    }
    // 3. After a run error (out of memory, a kernel's error) the worker's
    //    state is not to be trusted: the next candidate gets a fresh one.
    if (result.status() == proto::MEASURE_RUN_ERROR) worker_.reset();
    return result;
  }

 private:
  static absl::Status Abandoned() {
    return absl::CancelledError(
        "stopping: the candidate being measured was abandoned");
  }

  const LocalRunnerOptions options_;
  std::mutex mutex_;
  std::unique_ptr<WorkerProcess> worker_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<LocalRunner>> LocalRunner::Start(
    const LocalRunnerOptions& options) {
  if (options.worker_argv.empty() || options.worker_argv[0].empty()) {
    return absl::InvalidArgumentError("local runner: no worker command line");
  }
  for (const auto& [name, seconds] :
       {std::pair<const char*, double>{"timeout_s", options.timeout_s},
        {"startup_timeout_s", options.startup_timeout_s}}) {
    if (absl::Status st = CheckDurationSeconds(name, seconds); !st.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("local runner: ", st.message()));
    }
  }
  auto runner = std::make_unique<LocalRunnerImpl>(options);
  if (absl::Status st = runner->StartWorker(); !st.ok()) return st;
  return runner;
}

}  // namespace lathe::runner
