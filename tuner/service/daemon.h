// The tuner daemon (`lathe serve`): jobs, each a tuner::Tune on its own
// thread, whose candidates are measured by remote runners through the
// lease manager; the runner registry; persistence of jobs in the database
// and their resumption after a restart. The gRPC services
// (tuner/service/tuner_service.h, runner_service.h) are thin layers over
// this class, which is tested without gRPC.
//
// Guarantees (docs/service.md): every measured candidate of a job is
// committed by the job's Tune loop, batch by batch, exactly once (a result
// reaches Tune only through a live lease); a job whose daemon is killed
// stays "running" in the database and the next daemon on that database
// resumes it with the trials it still owes (the search never re-measures a
// program the database holds). Simulated runners (`lathe runner
// --simulate-ms`) only take work of simulated jobs, whose records go to a
// scratch database that is deleted at the job's end: fake times never reach
// the daemon's database. Jobs on the same (workload, target) share a claim
// registry (claim_registry.h): no program is measured by two of them, each
// learns from the other's records, and the cost model saved last holds what
// both measured.
// Tests: tests/tuner/service/daemon_test.cc.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "compiler/target/target.h"
#include "database/database.h"
#include "database/writer_lock.h"
#include "proto/service.pb.h"
#include "tuner/search/task.h"
#include "tuner/service/claim_registry.h"
#include "tuner/service/job_preparation.h"
#include "tuner/service/job_table.h"
#include "tuner/service/latency_histogram.h"
#include "tuner/service/lease_manager.h"
#include "tuner/service/runner_registry.h"

namespace lathe::service {

using TargetParser =
    std::function<absl::StatusOr<Target>(const std::string& text)>;

// What the daemon needs of the compiler, given by whoever starts it, so
// that the daemon links no code generator: `lathe serve` gives every target
// and HTML reports (compiler_hooks.h, with LLVM); a GPU machine's check
// binary (tools/service_check.h) gives cuda targets and no reports.
struct DaemonCompilerHooks {
  // Reads a target string (a job's spec.target, a runner's target).
  // Required: Start refuses options without it.
  TargetParser parse_target;
  // Writes an ended job's report beside the database (`weighted`: its
  // tasks' weights make a model's latency) and returns its path; null: no
  // reports.
  std::function<absl::StatusOr<std::string>(
      const std::string& db_path, const std::string& job,
      const std::vector<tuner::Task>& tasks, bool weighted)>
      write_report;
  // Where an ended job's report would be, to find it again after a
  // restart; null: no reports.
  std::function<std::string(const std::string& db_path, const std::string& job)>
      report_path;
};

struct DaemonOptions {
  DaemonCompilerHooks compiler;
  std::string db_path;
  absl::Duration lease_time = absl::Seconds(30);
  int64_t max_trials_per_job = 10000;
  // A model's tasks go as one job (`lathe submit MODEL.onnx`): a network has
  // tens of distinct kernel workloads.
  int max_workloads_per_job = 256;
  // The bytes of a workload's tensors (inputs and outputs) a job may ask
  // runners to hold, whatever their own memory limits; a workload whose
  // tensors exceed this, or the largest worker memory limit the target's
  // runners report, is refused at submit.
  int64_t max_workload_bytes = kDefaultMaxWorkloadBytes;
  static constexpr int64_t kDefaultMaxWorkloadBytes = int64_t{4} << 30;
  int quarantine_after = 5;  // consecutive failures; 0: never
  // Runners known at once (registration beyond it is refused).
  int max_runners = RunnerRegistry::kDefaultMaxRunners;
  // WatchJob streams open at once, each holding a server thread (beyond it
  // a watch is refused).
  int max_watchers = kDefaultMaxWatchers;
  static constexpr int kDefaultMaxWatchers = 64;
  // A runner silent this long is forgotten (at least 4 lease times).
  absl::Duration forget_runners_after = absl::Hours(1);
  int measure_parallelism = 16;  // candidates of one job out at once
  // Queued candidates a lease names for its runner to build ahead; 0: none
  // (lease_manager.h, "Building ahead").
  int build_ahead_hints = LeaseManager::kDefaultBuildAheadHints;
  absl::Duration max_acquire_wait = absl::Seconds(5);
  // Submitted jobs prepared (parsed, design spaces made) at once, those
  // whose client gave up included, and how long a submission waits for its
  // preparation (job_preparation.h).
  int max_preparing = JobPreparer::kDefaultMaxRunning;
  absl::Duration prepare_deadline = JobPreparer::kDefaultDeadline;
  std::string lathe_version;
  std::string scratch_dir = "/tmp";  // simulated jobs' databases
  bool log = true;                   // one line per event on stderr
};

class Daemon {
 public:
  // Opens (or creates) the database and resumes its unfinished jobs.
  // FailedPrecondition when another daemon serves the database
  // (database/writer_lock.h).
  static absl::StatusOr<std::unique_ptr<Daemon>> Start(
      const DaemonOptions& options);
  ~Daemon();
  // Stops every job after the candidates in flight; unfinished jobs stay
  // "running" in the database for the next daemon. Idempotent.
  void Shutdown();

  // The tuner service. Submit: InvalidArgument naming the field of the spec
  // at fault ("spec.workloads[1]: ..."), also for work over the limits.
  // Its parsing and design-space generation run off the caller's thread
  // (job_preparation.h): DeadlineExceeded past prepare_deadline,
  // ResourceExhausted beyond max_preparing, Cancelled as soon as
  // `client_gone` turns true or the daemon stops.
  absl::StatusOr<proto::JobStatus> Submit(
      const proto::JobSpec& spec,
      const std::function<bool()>& client_gone = nullptr);
  // Submitted jobs being prepared now (job_preparation.h).
  int preparing() const { return preparer_.running(); }
  absl::StatusOr<proto::JobStatus> GetJob(const std::string& id);
  std::vector<proto::JobStatus> ListJobs();
  absl::StatusOr<proto::JobStatus> CancelJob(const std::string& id);
  JobTable& jobs() { return jobs_; }
  // A WatchJob stream's place among max_watchers, held while the guard
  // lives; ResourceExhausted naming the limit when all are taken.
  class WatchSlot {
   public:
    explicit WatchSlot(std::atomic<int>& open) : open_(open) {}
    ~WatchSlot() { --open_; }
    WatchSlot(const WatchSlot&) = delete;
    WatchSlot& operator=(const WatchSlot&) = delete;

   private:
    std::atomic<int>& open_;
  };
  absl::StatusOr<std::unique_ptr<WatchSlot>> StartWatch();
  std::vector<proto::RunnerInfo> ListRunners();
  bool stopping() const { return stopping_.load(); }

  // The runner protocol. NotFound for an unknown runner id (register
  // again), FailedPrecondition for a quarantined runner.
  absl::StatusOr<proto::RegisterRunnerResponse> RegisterRunner(
      const proto::RegisterRunnerRequest& request, const std::string& peer);
  absl::StatusOr<proto::AcquireWorkResponse> AcquireWork(
      const proto::AcquireWorkRequest& request);
  absl::StatusOr<proto::HeartbeatResponse> Heartbeat(
      const proto::HeartbeatRequest& request);
  absl::StatusOr<proto::ReportResultResponse> ReportResult(
      const proto::ReportResultRequest& request);

  LeaseManager& leases() { return leases_; }

  // For operators' metrics (daemon_metrics.h): trials its jobs measured
  // since it started (second measurements of near-ties are not trials);
  // the seconds of each database commit of a job's measured records; when
  // it started.
  int64_t trials_measured() const { return trials_measured_.load(); }
  HistogramSnapshot commit_seconds() const {
    return commit_seconds_.Snapshot();
  }
  absl::Time started_at() const { return started_at_; }
  // The bounds of commit_seconds: a commit of one batch syncs the database
  // file, from about a millisecond to seconds on a busy disk.
  static std::vector<double> CommitSecondsBounds() {
    return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
            0.25,  0.5,    1,     2.5,  5,     10};
  }

 private:
  struct Run {
    std::thread thread;
    std::atomic<bool> stop{false};
    std::atomic<bool> cancelled{false};
  };

  explicit Daemon(const DaemonOptions& options);
  absl::Status Resume();
  absl::StatusOr<proto::JobSpec> Validate(const proto::JobSpec& spec);
  // `tasks`: the job's, when already made (else made by the run).
  void StartRun(const proto::JobStatus& job,
                std::optional<std::vector<tuner::Task>> tasks = std::nullopt);
  void RunJob(const std::string& id, Run& run,
              std::optional<std::vector<tuner::Task>> tasks);
  absl::Status PersistJob(const std::string& id);
  void Log(const std::string& line) const;

  const DaemonOptions options_;
  JobPreparer preparer_;
  std::unique_ptr<db::WriterLock> lock_;  // held while the daemon runs
  std::unique_ptr<db::Database> db_;      // jobs table; guarded by db_mutex_
  std::mutex db_mutex_;
  JobTable jobs_;
  LeaseManager leases_;
  RunnerRegistry runners_;
  ClaimRegistry claims_;  // of the jobs on the daemon's database
  std::mutex runs_mutex_;
  std::map<std::string, std::unique_ptr<Run>> runs_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> watchers_{0};
  std::atomic<int64_t> trials_measured_{0};
  LatencyHistogram commit_seconds_{CommitSecondsBounds()};
  const absl::Time started_at_ = absl::Now();
  std::thread expiry_;
};

}  // namespace lathe::service
