#include "cli/tune_command.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/bounded_read.h"
#include "cli/command.h"
#include "cli/db_common.h"
#include "cli/json_text.h"
#include "cli/model_args.h"
#include "cli/model_tasks.h"
#include "cli/time_text.h"
#include "cli/tune_progress.h"
#include "cli/tuned_tasks.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/kernel_program.h"
#include "compiler/target/target_info.h"
#include "compiler/workload/spec.h"
#include "database/database.h"
#include "database/job_state.h"
#include "database/writer_lock.h"
#include "report/report_file.h"
#include "runner/local_runner.h"
#include "runner/measurable_target.h"
#include "runner/measure_worker.h"
#include "tuner/search/measurement_record.h"
#include "tuner/search/measurement_rounds.h"
#include "tuner/search/task.h"
#include "tuner/search/tuner.h"

#ifndef LATHE_VERSION
#define LATHE_VERSION "unknown"
#endif

namespace lathe::cli {
namespace {

constexpr int64_t kDefaultTrials = 200;

struct TuneCommandOptions {
  std::vector<std::string> specs;  // or one model (MODEL.onnx)
  ModelArgs model;                 // its path set from specs; --shape
  bool retune = false;
  std::string workloads_file;
  std::string target = "host";
  int threads = 0;
  // -1: 200, or no limit when a --time-budget is given.
  int64_t trials = -1;
  double time_budget_s = 0;
  std::string db_path = kDefaultDatabase;
  uint64_t seed = 1;
  int batch_size = 32;
  std::string weights;
  std::string job;
  double min_time_s = 0.1;
  int measure_rounds = tuner::TuneOptions().measure_rounds;
  double timeout_s = 30;
  int population = 0;    // 0: the search's default
  int generations = -1;  // -1: the search's default
  bool json = false;
  bool no_default = false;
};

// Set by SIGINT, SIGTERM or SIGHUP (Ctrl-C, `timeout`, a CI job cancelled,
// a closed terminal): the tuner stops, abandoning the candidate being
// measured (the runner kills its worker; nothing of it is recorded), and
// what was measured is committed.
std::atomic<bool> g_stop{false};

extern "C" void OnInterrupt(int signal_number) {
  if (g_stop.load()) {
    // A second signal: the user means it.
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
  }
  g_stop.store(true);
}

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

// The handlers from the job's first row to its last: a signal before the
// search begins (while the default schedules are measured) stops the run
// as cleanly as one during it.
class StopSignals {
 public:
  StopSignals() {
    g_stop.store(false);
    struct sigaction action = {};
    action.sa_handler = OnInterrupt;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < std::size(kStopSignals); ++i) {
      sigaction(kStopSignals[i], &action, &previous_[i]);
    }
  }
  ~StopSignals() {
    for (size_t i = 0; i < std::size(kStopSignals); ++i) {
      sigaction(kStopSignals[i], &previous_[i], nullptr);
    }
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction previous_[std::size(kStopSignals)] = {};
};

// The default schedule's median on this runner: from the database when it
// was measured before, else measured now and recorded.
absl::StatusOr<std::optional<double>> DefaultScheduleMedian(
    const Workload& workload, const Target& target, db::Database& db,
    runner::LocalRunner& runner, const TuneCommandOptions& options,
    const std::string& job) {
  absl::StatusOr<KernelProgram> kernel =
      MakeKernelProgram(workload, nullptr, target);
  if (!kernel.ok()) return kernel.status();
  absl::StatusOr<std::vector<proto::Record>> records =
      db.RecordsOfTask(workload.Key(), target.ToString());
  if (!records.ok()) return records.status();
  for (auto it = records->rbegin(); it != records->rend(); ++it) {
    if (it->structural_hash() == kernel->structural_hash &&
        it->status() == proto::MEASURE_OK) {
      return std::optional<double>(it->median_s());
    }
  }
  proto::MeasureRequest request;
  request.set_workload(workload.CanonicalForm());
  kernel->trace.ToProto(request.mutable_trace());
  request.set_target(target.ToString());
  request.set_min_time_s(options.min_time_s);
  request.set_min_repeats(5);
  request.set_max_repeats(200);
  request.set_check_seed(1);
  absl::StatusOr<proto::MeasureResult> result = runner.Measure(request);
  if (!result.ok()) return result.status();
  const proto::Record record = tuner::MeasurementRecord(
      workload,
      TargetInfoOf(target, runner::MeasuringDeviceDescription(target)),
      kernel->trace, kernel->structural_hash, *result,
      {"local (default schedule)", LATHE_VERSION, job});
  absl::StatusOr<db::CommitResult> committed = db.Commit({record});
  if (!committed.ok()) return committed.status();
  if (record.status() != proto::MEASURE_OK) return std::optional<double>();
  return std::optional<double>(record.median_s());
}

// The most a --workloads-file may hold: tens of thousands of specs.
constexpr size_t kMaxWorkloadsFileBytes = size_t{4} << 20;

// The specs of a --workloads-file: one per line, blank lines and '#'
// comments skipped (what `lathe compile --misses` writes).
absl::StatusOr<std::vector<std::string>> ReadWorkloadsFile(
    const std::string& path) {
  absl::StatusOr<std::string> text =
      ReadBoundedFile(path, "--workloads-file", kMaxWorkloadsFileBytes,
                      "kMaxWorkloadsFileBytes");
  if (!text.ok()) return text.status();
  std::vector<std::string> specs;
  std::istringstream in(*text);
  std::string line;
  // Each spec is checked here, so that a bad one is named by file and line.
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where =
        absl::StrCat("--workloads-file ", path, ":", number, ": ");
    if (line.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "not text (a NUL byte)"));
    }
    line = line.substr(0, line.find('#'));
    absl::string_view spec = absl::StripAsciiWhitespace(line);
    if (spec.empty()) continue;
    if (absl::StatusOr<Workload> w = ParseWorkloadSpec(spec); !w.ok()) {
      return absl::Status(w.status().code(),
                          absl::StrCat(where, w.status().message()));
    }
    specs.emplace_back(spec);
  }
  return specs;
}

// One workload to tune, as the command line named it.
struct Requested {
  std::string spec;
  double weight = 1;
  int count = 0;  // calls per run of the model; 0: not a model's task
  // A model's task or a --workloads-file's: left out when the database
  // has it tuned (cli/tuned_tasks.h), unless --retune.
  bool skip_if_tuned = false;
};

// "nothing to tune" with --workloads-file listing no workload.
void PrintEmptyWorkloadsFile(const TuneCommandOptions& options) {
  if (options.json) {
    std::printf(
        "{\"db\": %s, \"trials\": 0, \"nothing_to_tune\": %s, \"tasks\": "
        "[]}\n",
        JsonString(options.db_path).c_str(),
        JsonString(absl::StrCat(options.workloads_file, " lists no workload"))
            .c_str());
  } else {
    std::printf("nothing to tune: %s lists no workload\n",
                options.workloads_file.c_str());
  }
}

// The workloads the options name: a model's tasks weighted by their
// counts, or the specs and the --workloads-file's with --weights. An empty
// result with OK: nothing to tune, already said.
absl::StatusOr<std::vector<Requested>> RequestedWorkloads(
    TuneCommandOptions& options, bool is_model) {
  std::vector<Requested> requested;
  if (is_model) {
    const std::string& path = options.model.path;
    if (!options.workloads_file.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": a model goes alone; --workloads-file ",
                       options.workloads_file, " is for workload specs"));
    }
    if (!options.weights.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--weights: the tasks of ", path,
          " are weighted by how often the model calls them; give no "
          "--weights with a model"));
    }
    absl::StatusOr<std::vector<ModelTaskWorkload>> tasks =
        LoadModelTasks(options.model);
    if (!tasks.ok()) return tasks.status();
    for (const ModelTaskWorkload& t : *tasks) {
      requested.push_back({t.workload.CanonicalForm(),
                           static_cast<double>(t.task.count), t.task.count,
                           /*skip_if_tuned=*/true});
    }
    if (requested.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": the model calls no kernel (lathe tasks lists none)"));
    }
    return requested;
  }
  for (const std::string& spec : options.specs) requested.push_back({spec});
  if (!options.workloads_file.empty()) {
    absl::StatusOr<std::vector<std::string>> specs =
        ReadWorkloadsFile(options.workloads_file);
    if (!specs.ok()) return specs.status();
    if (specs->empty() && options.specs.empty()) {
      // Nothing untuned: a CI step that tunes the misses of a build has
      // nothing to do, which is success.
      PrintEmptyWorkloadsFile(options);
      return requested;
    }
    for (const std::string& spec : *specs) {
      requested.push_back({spec, 1, 0, /*skip_if_tuned=*/true});
    }
  }
  if (requested.empty()) {
    return absl::InvalidArgumentError(
        "no workload: give one or more specs, e.g. matmul:M=512,N=512,K=512, "
        "or a model (MODEL.onnx)");
  }
  if (!options.weights.empty()) {
    std::vector<std::string> parts = absl::StrSplit(options.weights, ',');
    if (parts.size() != requested.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--weights has ", parts.size(), " values for ",
                       requested.size(), " workloads"));
    }
    for (size_t i = 0; i < parts.size(); ++i) {
      double& weight = requested[i].weight;
      if (!absl::SimpleAtod(parts[i], &weight) || !std::isfinite(weight) ||
          weight <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--weights: \"", parts[i], "\" is not a positive number"));
      }
    }
  }
  return requested;
}

// The model's estimated latency as JSON: seconds or null.
std::string JsonSeconds(const std::optional<double>& s) {
  return s ? absl::StrFormat("%.9g", *s) : "null";
}

absl::Status RunTune(TuneCommandOptions options) {
  absl::StatusOr<bool> is_model = ModelArgument(options.specs, options.model);
  if (!is_model.ok()) return is_model.status();
  absl::StatusOr<std::vector<Requested>> requested =
      RequestedWorkloads(options, *is_model);
  if (!requested.ok()) return requested.status();
  if (requested->empty()) return absl::OkStatus();
  if (options.trials == -1) {
    options.trials = options.time_budget_s > 0
                         ? std::numeric_limits<int64_t>::max()
                         : kDefaultTrials;
  }
  if (options.trials < 1)
    return absl::InvalidArgumentError("--trials must be at least 1");
  absl::StatusOr<Target> target = ParseTarget(options.target);
  if (!target.ok()) return target.status();
  if (options.threads > 0) target->num_threads = options.threads;
  if (absl::Status st = runner::CheckMeasurableHere(*target); !st.ok())
    return st;

  // Every task named, tuned in this run or not.
  std::vector<tuner::Task> all_tasks;
  for (size_t i = 0; i < requested->size(); ++i) {
    const Requested& r = (*requested)[i];
    absl::StatusOr<Workload> workload = ParseWorkloadSpec(r.spec);
    if (!workload.ok()) return workload.status();
    absl::StatusOr<tuner::Task> task =
        tuner::MakeTask(*workload, *target, r.weight);
    if (!task.ok()) {
      return absl::Status(task.status().code(),
                          absl::StrCat(workload->CanonicalForm(), ": ",
                                       task.status().message()));
    }
    for (size_t j = 0; j < all_tasks.size(); ++j) {
      if (all_tasks[j].key == task->key) {
        return absl::InvalidArgumentError(absl::StrCat(
            r.spec, ": the same workload as ", (*requested)[j].spec, " (",
            workload->CanonicalForm(),
            "); give it once, and --weights for how often it runs"));
      }
    }
    all_tasks.push_back(*std::move(task));
  }

  db::OpenOptions open;
  open.mode = db::OpenOptions::Mode::kCreate;
  absl::StatusOr<std::unique_ptr<db::Database>> db =
      db::Database::Open(options.db_path, open);
  if (!db.ok()) return db.status();
  // Held to the end: a second run (or a daemon) on this database would
  // measure the same programs and time its candidates beside ours.
  absl::StatusOr<std::unique_ptr<db::WriterLock>> lock =
      db::WriterLock::Acquire(options.db_path, "lathe tune");
  if (!lock.ok()) return lock.status();

  // Which of them this run tunes: the rest are tuned in the database.
  std::vector<size_t> tuning, skipped;
  for (size_t i = 0; i < all_tasks.size(); ++i) {
    bool tuned = false;
    if ((*requested)[i].skip_if_tuned && !options.retune) {
      absl::StatusOr<bool> is_tuned =
          IsTunedInDatabase(all_tasks[i].workload, *target, **db);
      if (!is_tuned.ok()) return is_tuned.status();
      tuned = *is_tuned;
    }
    (tuned ? skipped : tuning).push_back(i);
  }
  const std::string what =
      *is_model ? options.model.path : options.workloads_file;
  std::vector<std::optional<double>> skipped_best(all_tasks.size());
  for (size_t i : skipped) {
    absl::StatusOr<std::optional<double>> best =
        BestMedianInDatabase(all_tasks[i].workload, *target, **db);
    if (!best.ok()) return best.status();
    skipped_best[i] = *best;
  }
  auto skipped_json = [&] {
    std::vector<std::string> rows;
    for (size_t i : skipped) {
      rows.push_back(absl::StrCat(
          "{\"workload\": ", JsonString(all_tasks[i].workload.CanonicalForm()),
          *is_model ? absl::StrCat(", \"count\": ", (*requested)[i].count) : "",
          ", \"best_median_s\": ", JsonSeconds(skipped_best[i]), "}"));
    }
    if (rows.empty()) return std::string("[]");
    return absl::StrCat("[\n  ", absl::StrJoin(rows, ",\n  "), "\n]");
  };
  if (!skipped.empty() && !options.json) {
    std::printf(
        "skipped %zu of %zu %s, tuned in %s for %s already "
        "(--retune tunes them again):\n",
        skipped.size(), all_tasks.size(), *is_model ? "tasks" : "workloads",
        options.db_path.c_str(), target->ToString().c_str());
    for (size_t i : skipped) {
      std::printf("  %s%s\n", all_tasks[i].workload.CanonicalForm().c_str(),
                  *is_model
                      ? absl::StrCat(" (x", (*requested)[i].count, ")").c_str()
                      : "");
    }
    // Before the progress lines (stderr): a log of both reads in order.
    std::fflush(stdout);
  }
  if (tuning.empty()) {
    // Like a --workloads-file that lists nothing: success.
    const std::string why = absl::StrCat(
        "every ", *is_model ? "task of " : "workload of ", what,
        " is tuned in ", options.db_path, " for ", target->ToString());
    if (options.json) {
      // A model's estimate: every task by its best in the database.
      std::string model_fields;
      if (*is_model) {
        std::vector<TaskLatency> latency;
        for (size_t i : skipped) {
          latency.push_back({static_cast<double>((*requested)[i].count),
                             skipped_best[i], std::nullopt});
        }
        model_fields =
            absl::StrCat(" \"model\": ", JsonString(options.model.path),
                         ", \"model_latency_s\": ",
                         JsonSeconds(EstimatedModelLatency(latency)), ",");
      }
      std::printf(
          "{\"db\": %s,%s \"trials\": 0, \"nothing_to_tune\": %s, "
          "\"skipped\": %s, \"tasks\": []}\n",
          JsonString(options.db_path).c_str(), model_fields.c_str(),
          JsonString(why).c_str(), skipped_json().c_str());
    } else {
      std::printf("nothing to tune: %s (--retune tunes them again)\n",
                  why.c_str());
    }
    return absl::OkStatus();
  }
  std::vector<tuner::Task> tasks;
  for (size_t i : tuning) tasks.push_back(all_tasks[i]);

  const std::string job =
      options.job.empty()
          ? absl::StrCat("tune-",
                         absl::FormatTime("%Y%m%dT%H%M%S", absl::Now(),
                                          absl::UTCTimeZone()),
                         "-", getpid())
          : options.job;
  proto::Job job_record;
  job_record.set_id(job);
  std::vector<std::string> tuned_specs;
  for (size_t i : tuning) tuned_specs.push_back((*requested)[i].spec);
  job_record.set_description(absl::StrCat(
      "lathe tune ",
      *is_model ? absl::StrCat(options.model.path, " (", tasks.size(), " of ",
                               all_tasks.size(), " tasks)")
                : absl::StrJoin(tuned_specs, " "),
      " on ", target->ToString()));
  job_record.set_state(db::JobStateName(db::JobState::kRunning));
  StopSignals stop_signals;
  if (absl::Status st = (*db)->PutJob(job_record); !st.ok()) return st;

  runner::LocalRunnerOptions runner_options =
      runner::WorkerFor(*target, {"/proc/self/exe", "runner-worker"});
  runner_options.timeout_s = options.timeout_s;
  // Set only while Tune runs: Ctrl-C abandons the candidate in flight.
  runner_options.stop = &g_stop;
  absl::StatusOr<std::unique_ptr<runner::LocalRunner>> runner =
      runner::LocalRunner::Start(runner_options);
  if (!runner.ok()) return runner.status();

  // The default schedules' medians, by index into all_tasks: of the tasks
  // tuned, and of a model's skipped tasks too (its estimate before
  // tuning).
  std::vector<std::optional<double>> default_medians(all_tasks.size());
  if (!options.no_default) {
    std::vector<size_t> measured = tuning;
    if (*is_model)
      measured.insert(measured.end(), skipped.begin(), skipped.end());
    for (size_t i : measured) {
      absl::StatusOr<std::optional<double>> median = DefaultScheduleMedian(
          all_tasks[i].workload, *target, **db, **runner, options, job);
      if (g_stop.load()) break;
      if (!median.ok()) {
        job_record.set_state(db::JobStateName(db::JobState::kStopped));
        (*db)->PutJob(job_record).IgnoreError();
        return median.status();
      }
      default_medians[i] = *median;
    }
  }
  if (g_stop.load()) {
    job_record.set_state(db::JobStateName(db::JobState::kStopped));
    (*db)->PutJob(job_record).IgnoreError();
    std::fprintf(
        stderr,
        "lathe tune: stopped before the search began (job %s); what was "
        "measured is in %s, run again to continue\n",
        job.c_str(), options.db_path.c_str());
    return absl::OkStatus();
  }
  // A model's tasks in its latency estimate: those tuned here (in the
  // tuner's order), then the skipped ones.
  std::vector<TaskLatency> model_latency;
  if (*is_model) {
    for (size_t i : tuning) {
      model_latency.push_back({static_cast<double>((*requested)[i].count),
                               std::nullopt, default_medians[i]});
    }
    for (size_t i : skipped) {
      model_latency.push_back({static_cast<double>((*requested)[i].count),
                               skipped_best[i], default_medians[i]});
    }
  }

  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  ProgressPrinter printer;
  if (*is_model) printer.ShowModelLatency(model_latency);
  tuner::TuneOptions tune;
  tune.max_trials = options.trials;
  tune.time_budget_s = options.time_budget_s;
  tune.batch_size = options.batch_size;
  tune.seed = options.seed;
  tune.min_time_s = options.min_time_s;
  tune.measure_rounds = options.measure_rounds;
  if (options.population > 0) tune.search.population = options.population;
  if (options.generations >= 0) tune.search.generations = options.generations;
  tune.job = job;
  tune.runner_name = absl::StrCat("local@", host);
  tune.lathe_version = LATHE_VERSION;
  tune.device = runner::MeasuringDeviceDescription(*target);
  tune.stop = &g_stop;
  // Measuring with every core: a search running beside a timing would
  // disturb it, so it runs only while a batch is built.
  tune.overlap = target->num_threads < AllowedCpuCount();
  tune.search_while_building = !tune.overlap;
  if (!options.json)
    tune.on_progress = [&](const tuner::TuneProgress& p) { printer.Print(p); };
  tuner::MeasureFn measure = [&](const proto::MeasureRequest& request) {
    return (*runner)->Measure(request);
  };

  absl::StatusOr<tuner::TuneReport> report =
      tuner::Tune(tasks, **db, measure, tune);
  printer.Finish();
  job_record.set_state(db::JobStateName(report.ok() && !report->interrupted
                                            ? db::JobState::kDone
                                            : db::JobState::kStopped));
  (*db)->PutJob(job_record).IgnoreError();
  if (!report.ok()) return report.status();

  // The report of this job, beside the database, also when stopped: what
  // was measured is in it. A report that cannot be written does not fail
  // the tuning it describes.
  std::string report_path = report::DefaultReportPath(options.db_path);
  {
    report::ReportOptions report_options;
    report_options.job = job;
    if (*is_model) {
      report::ModelInput model{options.model.path, {}};
      for (size_t i = 0; i < all_tasks.size(); ++i) {
        model.tasks.push_back({all_tasks[i].workload.CanonicalForm(),
                               static_cast<double>((*requested)[i].count)});
      }
      report_options.model = std::move(model);
    }
    if (absl::Status st =
            report::WriteReport(options.db_path, report_options, report_path);
        !st.ok()) {
      std::fprintf(stderr, "lathe tune: no report: %s\n",
                   std::string(st.message()).c_str());
      report_path.clear();
    }
  }

  // The model's estimates after the run: with the default schedules, and
  // with each task's best.
  std::optional<double> model_default_s, model_tuned_s;
  if (*is_model) {
    for (size_t k = 0; k < tasks.size(); ++k)
      model_latency[k].best_s = report->tasks[k].best_s;
    model_default_s = EstimatedModelLatency(model_latency, false);
    model_tuned_s = EstimatedModelLatency(model_latency);
  }

  if (options.json) {
    std::vector<std::string> rows;
    for (size_t k = 0; k < tasks.size(); ++k) {
      const size_t i = tuning[k];
      const tuner::TaskProgress& t = report->tasks[k];
      const double default_gflops =
          default_medians[i]
              ? static_cast<double>(tasks[k].flops) / *default_medians[i] * 1e-9
              : 0;
      rows.push_back(absl::StrCat(
          "{\"workload\": ", JsonString(t.workload),
          *is_model ? absl::StrCat(", \"count\": ", (*requested)[i].count) : "",
          ", \"trials\": ", t.trials, ", \"errors\": ", t.errors,
          ", \"best_median_s\": ", JsonSeconds(t.best_s),
          ", \"best_gflops\": ", absl::StrFormat("%.3f", t.best_gflops),
          ", \"default_gflops\": ", absl::StrFormat("%.3f", default_gflops),
          "}"));
    }
    std::vector<std::string> accuracy;
    for (double a : report->BatchAccuracy())
      accuracy.push_back(absl::StrFormat("%.4f", a));
    std::string model_fields;
    if (*is_model) {
      model_fields = absl::StrCat(
          "\"model\": ", JsonString(options.model.path),
          ", \"model_latency_s\": ", JsonSeconds(model_tuned_s),
          ", \"model_default_latency_s\": ", JsonSeconds(model_default_s),
          ",\n ");
    }
    std::printf(
        "{\"db\": %s, \"job\": %s, \"target\": %s, \"trials\": %lld, "
        "\"wall_s\": %.3f, "
        "\"measure_s\": %.3f, \"interrupted\": %s, \"batch_accuracy\": [%s],\n "
        "%s\"skipped\": %s, \"report\": %s,\n \"tasks\": [\n  %s\n]}\n",
        JsonString(options.db_path).c_str(), JsonString(job).c_str(),
        JsonString(target->ToString()).c_str(),
        static_cast<long long>(report->trials), report->wall_s,
        report->measure_s, report->interrupted ? "true" : "false",
        absl::StrJoin(accuracy, ", ").c_str(), model_fields.c_str(),
        skipped_json().c_str(),
        report_path.empty() ? "null" : JsonString(report_path).c_str(),
        absl::StrJoin(rows, ",\n  ").c_str());
    return absl::OkStatus();
  }
  std::printf("%s %lld trials in %s (job %s, %s)%s\n",
              report->interrupted ? "stopped after" : "tuned:",
              static_cast<long long>(report->trials),
              FormatDuration(report->wall_s).c_str(), job.c_str(),
              options.db_path.c_str(),
              report->interrupted ? "; run again to continue" : "");
  for (size_t k = 0; k < tasks.size(); ++k) {
    const size_t i = tuning[k];
    const tuner::TaskProgress& t = report->tasks[k];
    std::printf("%s\n", t.workload.c_str());
    if (*is_model) std::printf("  count    %d\n", (*requested)[i].count);
    if (t.best_s) {
      std::printf("  best     %-11s %8.2f GFLOP/s\n",
                  TimeText(*t.best_s).c_str(), t.best_gflops);
    } else if (t.trials == 0) {
      std::printf("  best     none (nothing measured yet)\n");
    } else {
      std::printf(
          "  best     none (every candidate failed; see lathe db top)\n");
    }
    if (default_medians[i]) {
      const double gflops =
          static_cast<double>(tasks[k].flops) / *default_medians[i] * 1e-9;
      std::printf("  default  %-11s %8.2f GFLOP/s",
                  TimeText(*default_medians[i]).c_str(), gflops);
      if (t.best_s)
        std::printf("  (tuned is %.2fx)", *default_medians[i] / *t.best_s);
      std::printf("\n");
    }
    if (t.errors > 0) {
      std::printf("  %lld of %lld candidates failed (lathe db list)\n",
                  static_cast<long long>(t.errors),
                  static_cast<long long>(t.trials));
    }
  }
  if (*is_model) {
    std::string line =
        absl::StrCat("model ", options.model.path, ", estimated latency: ");
    if (!model_tuned_s) {
      absl::StrAppend(&line, "unknown (a task has no measurement)");
    } else if (!model_default_s) {
      absl::StrAppend(&line, TimeText(*model_tuned_s),
                      " tuned (the default schedules were not measured)");
    } else {
      absl::StrAppend(
          &line, TimeText(*model_default_s), " with the default schedules -> ",
          TimeText(*model_tuned_s), " tuned",
          absl::StrFormat(" (%.2fx)", *model_default_s / *model_tuned_s));
    }
    std::printf("%s\n", line.c_str());
  }
  if (!report_path.empty()) std::printf("report: %s\n", report_path.c_str());
  return absl::OkStatus();
}

}  // namespace

void AddTuneCommand(CLI::App& app) {
  auto options = std::make_shared<TuneCommandOptions>();
  CLI::App* command =
      app.add_subcommand("tune",
                         "search for the fastest schedules of workloads; "
                         "results go to the database");
  command->add_option("specs", options->specs,
                      "workload specs, e.g. matmul:M=512,N=512,K=512, or one "
                      "model (an ONNX file, MODEL.onnx): its tasks, each "
                      "weighted by how often the model calls it");
  options->model.AddShapeOption(command);
  command->add_flag(
      "--retune", options->retune,
      "tune a model's tasks (or a --workloads-file's workloads) that the "
      "database has tuned already too");
  command->add_option(
      "--workloads-file", options->workloads_file,
      "more specs from a file, one per line, '#' comments (e.g. what lathe "
      "compile --misses wrote)");
  command->add_option(
      "--target", options->target,
      "target, e.g. host, \"llvm -mcpu=haswell -num-threads=1\" or cuda "
      "(this machine's GPU) (default: host); it must run here");
  command
      ->add_option(
          "--threads", options->threads,
          "threads of parallel loops (default: the target's; host: every CPU)")
      ->check(WholeNumber(1, 1024));
  command->add_option("--trials", options->trials,
                      "measurements in all (default 200; no limit beside "
                      "--time-budget)");
  command
      ->add_option("--time-budget", options->time_budget_s,
                   "stop after this many seconds (default: no limit)")
      ->check(NonNegativeSeconds());
  command->add_option("--db", options->db_path,
                      "the database (default lathe.db)");
  command->add_option("--seed", options->seed, "the search's seed (default 1)")
      ->check(WholeNumber(0, INT64_MAX));
  command
      ->add_option("--batch", options->batch_size,
                   "candidates per batch (default 32)")
      ->check(WholeNumber(1, 1024));
  command->add_option(
      "--weights", options->weights,
      "how often each workload runs, e.g. 1,4 (default: 1 each)");
  command->add_option("--job", options->job,
                      "the job id of the records (default: generated)");
  command
      ->add_option(
          "--min-time", options->min_time_s,
          "time each candidate at least this long, seconds (default 0.1)")
      ->check(NonNegativeSeconds());
  command
      ->add_option("--measure-rounds", options->measure_rounds,
                   "measure each batch in this many rounds, the min time split "
                   "over them: "
                   "a slow spell of the machine then does not decide a result "
                   "(default 3)")
      ->check(CLI::Range(1, tuner::kMaxMeasureRounds));
  command
      ->add_option(
          "--timeout", options->timeout_s,
          "per candidate: build, check and timing, seconds (default 30)")
      ->check(Seconds());
  command
      ->add_option(
          "--population", options->population,
          "candidates per generation of the evolutionary search (default 128)")
      ->check(WholeNumber(1, 100000));
  command
      ->add_option("--generations", options->generations,
                   "generations of mutation per batch (default 3)")
      ->check(WholeNumber(0, 1000));
  command->add_flag("--no-default", options->no_default,
                    "do not measure the default schedule for comparison");
  command->add_flag("--json", options->json, "print a JSON summary");
  SetAction(command, [options] { return RunTune(*options); });
}

}  // namespace lathe::cli
