#include "tuner/service/daemon.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/log_line.h"
#include "base/status_macros.h"
#include "compiler/workload/spec.h"
#include "database/scratch_database.h"
#include "tuner/search/measurement_rounds.h"
#include "tuner/search/task.h"
#include "tuner/search/tuner.h"
#include "tuner/service/field_error.h"

namespace lathe::service {
namespace {

constexpr int kMaxBatchSize = 1024;
constexpr double kMaxMinTimeS = 60;
constexpr absl::string_view kRemeasureMark = "(re-measure)";

// The bytes of a workload's tensors, inputs and outputs (saturating).
int64_t TensorBytes(const Workload& workload) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t total = 0;
  for (const auto* tensors : {&workload.inputs(), &workload.outputs()}) {
    for (const te::Tensor& tensor : *tensors) {
      int64_t bytes = tensor.dtype().bytes();
      for (int64_t extent : tensor.shape()) {
        if (extent <= 0) continue;
        bytes = bytes > kMax / extent ? kMax : bytes * extent;
      }
      total = total > kMax - bytes ? kMax : total + bytes;
    }
  }
  return total;
}

std::string NewJobId() {
  std::random_device device;
  return absl::StrFormat(
      "job-%s-%04x",
      absl::FormatTime("%Y%m%dT%H%M%S", absl::Now(), absl::UTCTimeZone()),
      device() & 0xffff);
}

absl::StatusOr<std::vector<tuner::Task>> TasksOf(const proto::JobSpec& spec,
                                                 const TargetParser& parse) {
  absl::StatusOr<Target> target = parse(spec.target());
  if (!target.ok()) return FieldError("spec.target", target.status().message());
  std::vector<tuner::Task> tasks;
  for (int i = 0; i < spec.workloads_size(); ++i) {
    const std::string field = absl::StrCat("spec.workloads[", i, "]");
    absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec.workloads(i));
    if (!workload.ok()) return FieldError(field, workload.status().message());
    absl::StatusOr<tuner::Task> task = tuner::MakeTask(
        *workload, *target, spec.weights_size() > 0 ? spec.weights(i) : 1.0);
    if (!task.ok()) return FieldError(field, task.status().message());
    tasks.push_back(*std::move(task));
  }
  return tasks;
}

// The workload's tensors fit `max_bytes` and `runner_limit` (the largest
// worker memory limit of the target's runners; 0: none known).
absl::Status CheckFits(const Workload& workload, int64_t max_bytes,
                       int64_t runner_limit) {
  const int64_t bytes = TensorBytes(workload);
  if (bytes > max_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "its tensors take %d bytes, over the daemon's limit of %d bytes "
        "(--max-workload-bytes)",
        bytes, max_bytes));
  }
  if (runner_limit > 0 && bytes > runner_limit) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "its tensors take %d bytes, over the largest worker memory limit of "
        "the target's runners (%d bytes): no runner could measure it",
        bytes, runner_limit));
  }
  return absl::OkStatus();
}

// A validated spec's workloads parsed, put in canonical form, checked
// against the memory limits, and their tasks (design spaces) made. Runs on
// a JobPreparer's thread: refers to nothing of the daemon.
absl::StatusOr<PreparedJob> PrepareJob(proto::JobSpec spec, int64_t max_bytes,
                                       int64_t runner_limit,
                                       const TargetParser& parse) {
  const int n = spec.workloads_size();
  for (int i = 0; i < n; ++i) {
    absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec.workloads(i));
    if (!workload.ok()) {
      return FieldError(absl::StrCat("spec.workloads[", i, "]"),
                        workload.status().message());
    }
    spec.set_workloads(i, workload->CanonicalForm());
    if (absl::Status st = CheckFits(*workload, max_bytes, runner_limit);
        !st.ok()) {
      return FieldError(absl::StrCat("spec.workloads[", i, "]"), st.message());
    }
    for (int j = 0; j < i; ++j) {
      if (spec.workloads(j) == spec.workloads(i)) {
        return FieldError(absl::StrCat("spec.workloads[", i, "]"),
                          absl::StrCat("the same workload as spec.workloads[",
                                       j, "] (", spec.workloads(i),
                                       "); give it once, with its weight"));
      }
    }
  }
  absl::StatusOr<std::vector<tuner::Task>> tasks = TasksOf(spec, parse);
  if (!tasks.ok()) return tasks.status();
  return PreparedJob{std::move(spec), *std::move(tasks)};
}

// A job's per-task trials, errors and best, read back from its records
// (re-measurements of near-ties are not trials): a daemon that restarts
// knows a job only by its row and its records, and would otherwise show a
// finished job without its tasks and count a resumed one's from zero.
void SetTasksFromRecords(const std::vector<tuner::Task>& tasks,
                         const std::vector<proto::Record>& records,
                         proto::JobStatus& job) {
  job.clear_tasks();
  std::map<std::string, std::pair<const tuner::Task*, proto::TaskStatus*>>
      by_key;
  for (const tuner::Task& task : tasks) {
    proto::TaskStatus* status = job.add_tasks();
    status->set_workload(task.workload.CanonicalForm());
    by_key[task.key] = {&task, status};
  }
  for (const proto::Record& r : records) {
    auto it = by_key.find(r.workload_key());
    if (it == by_key.end()) continue;
    const auto& [task, status] = it->second;
    const bool ok = r.status() == proto::MEASURE_OK;
    if (!absl::StrContains(r.runner(), kRemeasureMark)) {
      status->set_trials(status->trials() + 1);
      if (!ok) status->set_errors(status->errors() + 1);
    }
    if (ok && r.median_s() > 0 &&
        (status->best_s() == 0 || r.median_s() < status->best_s())) {
      status->set_best_s(r.median_s());
      status->set_best_gflops(static_cast<double>(task->flops) / r.median_s() *
                              1e-9);
    }
  }
}

}  // namespace

Daemon::Daemon(const DaemonOptions& options)
    : options_(options),
      preparer_(options.max_preparing, options.prepare_deadline),
      leases_(
          options.lease_time, [] { return absl::Now(); },
          options.build_ahead_hints),
      runners_(
          options.quarantine_after, options.lease_time * 2,
          std::max(options.forget_runners_after, options.lease_time * 4),
          [] { return absl::Now(); }, options.max_runners) {}

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Start(
    const DaemonOptions& options) {
  if (options.db_path.empty())
    return absl::InvalidArgumentError("no database (--db)");
  if (!options.compiler.parse_target) {
    return absl::InvalidArgumentError(
        "daemon: no target parser (DaemonCompilerHooks::parse_target)");
  }
  if (options.lease_time <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--lease-seconds must be positive");
  }
  if (options.max_trials_per_job < 1) {
    return absl::InvalidArgumentError(
        "--max-trials-per-job must be at least 1");
  }
  std::unique_ptr<Daemon> daemon(new Daemon(options));
  db::OpenOptions open;
  open.mode = db::OpenOptions::Mode::kCreate;
  absl::StatusOr<std::unique_ptr<db::Database>> db =
      db::Database::Open(options.db_path, open);
  if (!db.ok()) return db.status();
  // Locked once the path is known to be a database (no lock file beside
  // what is not one), before any job is resumed.
  absl::StatusOr<std::unique_ptr<db::WriterLock>> lock =
      db::WriterLock::Acquire(options.db_path, "lathe serve");
  if (!lock.ok()) return lock.status();
  daemon->lock_ = *std::move(lock);
  daemon->db_ = *std::move(db);
  if (absl::Status st = daemon->Resume(); !st.ok()) return st;
  Daemon* self = daemon.get();
  daemon->expiry_ = std::thread([self] {
    const auto tick = std::min<std::chrono::nanoseconds>(
        std::chrono::milliseconds(200),
        absl::ToChronoNanoseconds(self->options_.lease_time / 4));
    while (!self->stopping_.load()) {
      std::this_thread::sleep_for(tick);
      for (const std::string& runner : self->leases_.ExpireLeases()) {
        self->Log(absl::StrCat(
            "a lease of runner ", runner,
            " expired (no heartbeat); its candidate is queued again"));
      }
    }
  });
  return daemon;
}

Daemon::~Daemon() { Shutdown(); }

void Daemon::Log(const std::string& line) const {
  if (options_.log) LogLine("lathe serve", line);
}

absl::Status Daemon::Resume() {
  absl::StatusOr<std::vector<proto::Job>> rows = db_->Jobs();
  if (!rows.ok()) return rows.status();
  std::vector<proto::JobStatus> resume;
  for (const proto::Job& row : *rows) {
    absl::StatusOr<std::optional<proto::JobSpec>> spec = SpecOfRow(row);
    if (!spec.ok()) {
      Log(std::string(spec.status().message()));
      continue;
    }
    if (!*spec) continue;  // not a service job
    proto::JobStatus job;
    job.set_id(row.id());
    *job.mutable_spec() = **spec;
    job.set_state(StateOfRow(row));
    job.set_created_at_unix_ms(row.created_at_unix_ms());
    job.set_trials_total(job.spec().max_trials());
    absl::StatusOr<std::vector<proto::Record>> records =
        db_->RecordsOfJob(row.id());
    if (!records.ok()) return records.status();
    int64_t trials = 0;
    for (const proto::Record& r : *records) {
      if (!absl::StrContains(r.runner(), kRemeasureMark)) ++trials;
    }
    job.set_trials_done(trials);
    if (absl::StatusOr<std::vector<tuner::Task>> tasks =
            TasksOf(job.spec(), options_.compiler.parse_target);
        tasks.ok()) {
      SetTasksFromRecords(*tasks, *records, job);
    }
    const bool unfinished = !IsFinal(job.state());
    if (unfinished) job.set_resumed(1);
    // An ended job's report, written by the daemon that ran it, is still
    // beside the database unless someone removed it.
    if (!unfinished && !job.spec().simulated() &&
        options_.compiler.report_path) {
      const std::string report =
          options_.compiler.report_path(options_.db_path, job.id());
      std::error_code error;
      if (std::filesystem::is_regular_file(report, error))
        job.set_report_path(report);
    }
    LATHE_RETURN_IF_ERROR(jobs_.Add(job));
    if (unfinished) resume.push_back(job);
  }
  // Started once the database is read: a job thread writes its row.
  for (const proto::JobStatus& job : resume) {
    Log(absl::StrCat("resuming job ", job.id(), " (", job.trials_done(), " of ",
                     job.spec().max_trials(), " trials recorded)"));
    StartRun(job);
  }
  return absl::OkStatus();
}

absl::StatusOr<proto::JobSpec> Daemon::Validate(const proto::JobSpec& given) {
  proto::JobSpec spec = given;
  const int n = spec.workloads_size();
  if (n == 0)
    return FieldError("spec.workloads",
                      "empty; give at least one workload spec");
  if (n > options_.max_workloads_per_job) {
    return FieldError("spec.workloads",
                      absl::StrCat(n, " workloads; the limit is ",
                                   options_.max_workloads_per_job, " per job"));
  }
  if (spec.weights_size() != 0 && spec.weights_size() != n) {
    return FieldError(
        "spec.weights",
        absl::StrCat(spec.weights_size(), " weights for ", n, " workloads"));
  }
  for (int i = 0; i < spec.weights_size(); ++i) {
    if (!(spec.weights(i) > 0) || !std::isfinite(spec.weights(i))) {
      return FieldError(
          absl::StrCat("spec.weights[", i, "]"),
          absl::StrCat(spec.weights(i), ": must be positive and finite"));
    }
  }
  if (spec.target().empty()) return FieldError("spec.target", "empty");
  absl::StatusOr<Target> target = options_.compiler.parse_target(spec.target());
  if (!target.ok()) return FieldError("spec.target", target.status().message());
  spec.set_target(target->ToString());
  if (spec.max_trials() < 1)
    return FieldError("spec.max_trials", "must be at least 1");
  if (spec.max_trials() > options_.max_trials_per_job) {
    return FieldError(
        "spec.max_trials",
        absl::StrCat(spec.max_trials(), " exceeds the limit of ",
                     options_.max_trials_per_job, " trials per job"));
  }
  if (spec.batch_size() == 0) spec.set_batch_size(32);
  if (spec.batch_size() < 0 || spec.batch_size() > kMaxBatchSize) {
    return FieldError("spec.batch_size",
                      absl::StrCat("must be in [1, ", kMaxBatchSize, "]"));
  }
  if (spec.seed() == 0) spec.set_seed(1);
  if (spec.min_time_s() == 0) spec.set_min_time_s(0.1);
  if (!(spec.min_time_s() > 0 && spec.min_time_s() <= kMaxMinTimeS)) {
    return FieldError("spec.min_time_s",
                      absl::StrCat("must be in (0, ", kMaxMinTimeS, "]"));
  }
  if (spec.measure_rounds() == 0)
    spec.set_measure_rounds(tuner::TuneOptions().measure_rounds);
  if (spec.measure_rounds() < 1 ||
      spec.measure_rounds() > tuner::kMaxMeasureRounds) {
    return FieldError(
        "spec.measure_rounds",
        absl::StrCat("must be in [1, ", tuner::kMaxMeasureRounds, "]"));
  }
  if (spec.remeasure_top() == 0) spec.set_remeasure_top(3);
  if (spec.remeasure_top() < -1 || spec.remeasure_top() > 16) {
    return FieldError("spec.remeasure_top", "must be in [-1, 16]");
  }
  return spec;
}

absl::Status Daemon::PersistJob(const std::string& id) {
  absl::StatusOr<proto::JobStatus> job = jobs_.Get(id);
  if (!job.ok()) return job.status();
  if (job->spec().simulated())
    return absl::OkStatus();  // never in the real database
  std::lock_guard<std::mutex> lock(db_mutex_);
  return db_->PutJob(JobRow(*job));
}

absl::StatusOr<proto::JobStatus> Daemon::Submit(
    const proto::JobSpec& given, const std::function<bool()>& client_gone) {
  if (stopping_.load()) return absl::UnavailableError("the daemon is stopping");
  absl::StatusOr<proto::JobSpec> validated = Validate(given);
  if (!validated.ok()) return validated.status();
  // Design spaces of every workload on the target: a workload the search
  // cannot handle is refused now, not found failed later. Off this (the
  // RPC handler's) thread, bounded in time and number.
  const int64_t max_bytes = options_.max_workload_bytes;
  const int64_t runner_limit =
      validated->simulated()
          ? 0
          : runners_.LargestMemoryLimit(validated->target(), false);
  absl::StatusOr<PreparedJob> prepared = preparer_.Run(
      [spec = *validated, max_bytes, runner_limit,
       parse = options_.compiler.parse_target] {
        return PrepareJob(spec, max_bytes, runner_limit, parse);
      },
      [this, &client_gone] {
        return stopping_.load() || (client_gone && client_gone());
      });
  if (!prepared.ok()) {
    if (!absl::IsInvalidArgument(prepared.status())) {
      Log(absl::StrCat("a submitted job was not prepared: ",
                       prepared.status().message()));
    }
    return prepared.status();
  }
  const proto::JobSpec* spec = &prepared->spec;
  proto::JobStatus job;
  job.set_id(NewJobId());
  while (jobs_.Get(job.id()).ok()) job.set_id(NewJobId());
  *job.mutable_spec() = *spec;
  job.set_state(proto::JOB_RUNNING);
  job.set_trials_total(spec->max_trials());
  job.set_created_at_unix_ms(absl::ToUnixMillis(absl::Now()));
  for (const std::string& w : spec->workloads())
    job.add_tasks()->set_workload(w);
  if (absl::Status st = jobs_.Add(job); !st.ok()) return st;
  if (absl::Status st = PersistJob(job.id()); !st.ok()) {
    jobs_.Update(job.id(), [&](proto::JobStatus& j) {
      j.set_state(proto::JOB_FAILED);
      j.set_error(std::string(st.message()));
    });
    return st;
  }
  Log(absl::StrCat("job ", job.id(), " submitted: ", spec->workloads_size(),
                   " workload(s), ", spec->max_trials(), " trials on \"",
                   spec->target(), "\"",
                   spec->simulated() ? " (simulated)" : ""));
  StartRun(job, std::move(prepared->tasks));
  return job;
}

void Daemon::StartRun(const proto::JobStatus& job,
                      std::optional<std::vector<tuner::Task>> tasks) {
  std::lock_guard<std::mutex> lock(runs_mutex_);
  if (stopping_.load()) return;  // stays "running" in the database
  auto run = std::make_unique<Run>();
  Run* raw = run.get();
  const std::string id = job.id();
  run->thread =
      std::thread([this, id, raw, tasks = std::move(tasks)]() mutable {
        RunJob(id, *raw, std::move(tasks));
      });
  runs_[id] = std::move(run);
}

void Daemon::RunJob(const std::string& id, Run& run,
                    std::optional<std::vector<tuner::Task>> prepared) {
  absl::StatusOr<proto::JobStatus> job = jobs_.Get(id);
  if (!job.ok()) return;
  const proto::JobSpec spec = job->spec();
  const int64_t before = job->trials_done();
  // A resumed job's tasks as its records left them: this run's counts add up.
  std::map<std::string, proto::TaskStatus> tasks_before;
  for (const proto::TaskStatus& t : job->tasks())
    tasks_before[t.workload()] = t;
  auto finish = [&](proto::JobState state, const std::string& error,
                    const std::string& report_path = "") {
    jobs_.Update(
        id,
        [&](proto::JobStatus& j) {
          j.set_state(state);
          j.set_error(error);
          j.set_report_path(report_path);
        },
        absl::StrCat("job ", RowState(state), error.empty() ? "" : ": ",
                     error));
    if (absl::Status st = PersistJob(id); !st.ok())
      Log(std::string(st.message()));
    Log(absl::StrCat("job ", id, " ", RowState(state),
                     error.empty() ? "" : ": ", error));
  };

  absl::StatusOr<std::vector<tuner::Task>> tasks =
      prepared ? absl::StatusOr<std::vector<tuner::Task>>(*std::move(prepared))
               : TasksOf(spec, options_.compiler.parse_target);
  if (!tasks.ok()) {
    finish(proto::JOB_FAILED, std::string(tasks.status().message()));
    return;
  }
  // Each job its own connection: a db::Database is used by one thread. A
  // simulated job's records go to a scratch database nobody else can
  // predict the path of, removed at the job's end.
  std::unique_ptr<db::ScratchDatabase> scratch;
  if (spec.simulated()) {
    absl::StatusOr<std::unique_ptr<db::ScratchDatabase>> made =
        db::ScratchDatabase::Create(options_.scratch_dir, "lathe-simulated-");
    if (!made.ok()) {
      finish(proto::JOB_FAILED, std::string(made.status().message()));
      return;
    }
    scratch = *std::move(made);
  }
  const std::string path =
      scratch != nullptr ? scratch->path() : options_.db_path;
  db::OpenOptions open;
  open.mode = spec.simulated() ? db::OpenOptions::Mode::kCreate
                               : db::OpenOptions::Mode::kReadWrite;
  open.durable = !spec.simulated();
  absl::StatusOr<std::unique_ptr<db::Database>> db =
      db::Database::Open(path, open);
  if (!db.ok()) {
    finish(proto::JOB_FAILED, std::string(db.status().message()));
    return;
  }

  tuner::TuneOptions tune;
  tune.max_trials = std::max<int64_t>(0, spec.max_trials() - before);
  tune.batch_size = spec.batch_size();
  tune.seed = spec.seed();
  tune.min_time_s = spec.min_time_s();
  tune.measure_rounds = spec.measure_rounds();
  tune.remeasure_top = spec.remeasure_top() < 0 ? 0 : spec.remeasure_top();
  tune.measure_parallelism = options_.measure_parallelism;
  tune.job = id;
  tune.runner_name = "remote";
  tune.lathe_version = options_.lathe_version;
  tune.stop = &run.stop;
  int64_t counted = 0;  // of this run's trials, in trials_measured_
  tune.on_commit = [this](double seconds) { commit_seconds_.Observe(seconds); };
  // A simulated job's scratch database is its own: nothing to share.
  if (!spec.simulated()) tune.concurrent = &claims_;
  tune.on_progress = [&](const tuner::TuneProgress& p) {
    trials_measured_ += p.trials_done - counted;
    counted = p.trials_done;
    std::string best;
    for (const tuner::TaskProgress& t : p.tasks) {
      if (t.best_s) {
        absl::StrAppendFormat(&best, "%s%.4f ms", best.empty() ? "" : ", ",
                              *t.best_s * 1e3);
      }
    }
    jobs_.Update(
        id,
        [&](proto::JobStatus& j) {
          j.set_trials_done(before + p.trials_done);
          j.clear_tasks();
          for (const tuner::TaskProgress& t : p.tasks) {
            proto::TaskStatus& task = *j.add_tasks();
            const proto::TaskStatus& earlier = tasks_before[t.workload];
            task.set_workload(t.workload);
            task.set_trials(earlier.trials() + t.trials);
            task.set_errors(earlier.errors() + t.errors);
            // The tuner's best covers the database, this job's earlier
            // records included.
            task.set_best_s(t.best_s.value_or(earlier.best_s()));
            task.set_best_gflops(t.best_s ? t.best_gflops
                                          : earlier.best_gflops());
          }
        },
        absl::StrCat(before + p.trials_done, "/", spec.max_trials(), " trials",
                     best.empty() ? "" : ", best ", best));
  };
  const bool simulated = spec.simulated();
  tuner::MeasureFn measure = [this, id, simulated,
                              &run](const proto::MeasureRequest& request)
      -> absl::StatusOr<proto::MeasureResult> {
    const int64_t item = leases_.Enqueue(WorkItem{id, simulated, request});
    // Cancelled or stopping after the check in Tune: this item must not
    // wait for a runner forever.
    if (run.stop.load()) {
      leases_.CancelJob(id, run.cancelled.load()
                                ? absl::CancelledError("job cancelled")
                                : absl::UnavailableError("daemon stopping"));
    }
    return leases_.Wait(item);
  };

  absl::StatusOr<tuner::TuneReport> report =
      tuner::Tune(*tasks, **db, measure, tune);
  db->reset();
  scratch.reset();
  // The job's report beside the database, once it has ended (a simulated
  // job's records went with its scratch database). One that cannot be
  // written is logged; the job's state does not depend on it.
  auto write_report = [&]() -> std::string {
    if (simulated || !options_.compiler.write_report) return "";
    absl::StatusOr<std::string> path = options_.compiler.write_report(
        options_.db_path, id, *tasks, spec.weights_size() > 0);
    if (!path.ok()) {
      Log(absl::StrCat("job ", id, ": no report: ", path.status().message()));
      return "";
    }
    return *path;
  };
  if (run.cancelled.load()) {
    finish(proto::JOB_CANCELLED, "", write_report());
  } else if (report.ok() && !report->interrupted) {
    // Even when the daemon stops right now.
    finish(proto::JOB_DONE, "", write_report());
  } else if (stopping_.load()) {
    // Left "running" in the database: the next daemon resumes it.
    Log(absl::StrCat("job ", id,
                     " stopped with the daemon; it resumes on restart"));
  } else {
    finish(proto::JOB_FAILED,
           report.ok() ? "stopped" : std::string(report.status().message()),
           write_report());
  }
}

absl::StatusOr<proto::JobStatus> Daemon::GetJob(const std::string& id) {
  if (id.empty()) return FieldError("id", "empty");
  absl::StatusOr<proto::JobStatus> job = jobs_.Get(id);
  if (!job.ok()) return job.status();
  const auto [queued, leased] = leases_.JobCounts(id);
  job->set_work_queued(queued);
  job->set_work_leased(leased);
  return job;
}

absl::StatusOr<std::unique_ptr<Daemon::WatchSlot>> Daemon::StartWatch() {
  if (++watchers_ > options_.max_watchers) {
    --watchers_;
    return absl::ResourceExhaustedError(absl::StrCat(
        "the daemon serves ", options_.max_watchers,
        " watches of jobs at once, its limit (--max-watchers); try again "
        "later or list jobs with lathe jobs"));
  }
  return std::make_unique<WatchSlot>(watchers_);
}

std::vector<proto::JobStatus> Daemon::ListJobs() {
  std::vector<proto::JobStatus> jobs = jobs_.List();
  for (proto::JobStatus& job : jobs) {
    const auto [queued, leased] = leases_.JobCounts(job.id());
    job.set_work_queued(queued);
    job.set_work_leased(leased);
  }
  return jobs;
}

absl::StatusOr<proto::JobStatus> Daemon::CancelJob(const std::string& id) {
  absl::StatusOr<proto::JobStatus> job = GetJob(id);
  if (!job.ok()) return job.status();
  if (IsFinal(job->state())) return job;
  {
    std::lock_guard<std::mutex> lock(runs_mutex_);
    auto it = runs_.find(id);
    if (it != runs_.end()) {
      it->second->cancelled.store(true);
      it->second->stop.store(true);
    }
  }
  leases_.CancelJob(id, absl::CancelledError("job cancelled"));
  Log(absl::StrCat("cancelling job ", id));
  // Answered once the job has ended (its run logs and persists that), so
  // that the caller sees "cancelled", not the state before; a run that
  // takes longer is answered as it is then.
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  int64_t version = -1;
  while (absl::Now() < give_up) {
    absl::StatusOr<JobTable::Snapshot> snapshot =
        jobs_.WaitForChange(id, version, give_up - absl::Now());
    if (!snapshot.ok()) break;
    if (IsFinal(snapshot->job.state())) return snapshot->job;
    version = snapshot->version;
  }
  return GetJob(id);
}

void Daemon::Shutdown() {
  if (stopping_.exchange(true)) return;
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(runs_mutex_);
    for (auto& [id, run] : runs_) run->stop.store(true);
  }
  leases_.CancelAll(absl::UnavailableError("daemon stopping"));
  {
    std::lock_guard<std::mutex> lock(runs_mutex_);
    for (auto& [id, run] : runs_) {
      if (run->thread.joinable()) run->thread.join();
    }
  }
  jobs_.WakeAll();
  if (expiry_.joinable()) expiry_.join();
}

}  // namespace lathe::service
