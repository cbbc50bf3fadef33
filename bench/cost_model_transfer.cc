// bench_transfer: the cost model across tasks (bench/README.md,
// "bench_transfer"). Two parts:
//  1. Trials to a latency, cold against warm: tunes --second from an empty
//     database, then again into a database where --first was tuned before
//     (its records, and the cost model that run saved), and into one with
//     the first's records alone (no saved model), each run --trials
//     trials with the same seed, measured for real by a LocalRunner whose
//     worker is --worker (lathe-runner-worker). For latencies within 50%,
//     25%, 10% and 5% of the best any run found, it prints the trials each
//     run took to reach them.
//  2. The warm start's cost: fills a database with --records records spread
//     over --workloads matmul workloads of the target (sampled points of
//     their design spaces with made-up times: nothing is measured), then
//     times the warm start of a tuning run of another workload against it
//     (Tune with no trials: the query, the replays, the first training), and
//     one training on those rows (what every batch's retraining costs more).
//
//   bench_transfer --worker PATH [--first SPEC] [--second SPEC] [--trials N]
//       [--batch N] [--threads N] [--seed N] [--min-time S] [--records N]
//       [--workloads N] [--dir DIR] [--skip-transfer] [--skip-warm-start]
// Not a test: it measures on this machine, and its figures move with the
// machine's load.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/target/target_info.h"
#include "compiler/workload/spec.h"
#include "database/database.h"
#include "runner/local_runner.h"
#include "tuner/cost_model/xgb_cost_model.h"
#include "tuner/search/candidate.h"
#include "tuner/search/measurement_record.h"
#include "tuner/search/task.h"
#include "tuner/search/tuner.h"

namespace lathe {
namespace {

struct Options {
  std::string worker;
  std::string first = "matmul:M=256,N=256,K=256";
  std::string second = "matmul:M=256,N=384,K=256";
  int64_t trials = 96;
  int batch = 16;
  int threads = 1;
  uint64_t seed = 1;
  double min_time_s = 0.05;
  int64_t records = 3000;
  int workloads = 6;
  std::string dir;
  bool transfer = true;
  bool warm_start = true;
};

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(
      stderr,
      "bench_transfer: %s\nusage: bench_transfer --worker PATH [--first SPEC] "
      "[--second SPEC] [--trials N] [--batch N] [--threads N] [--seed N] "
      "[--min-time S] [--records N] [--workloads N] [--dir DIR] "
      "[--skip-transfer] [--skip-warm-start]\n",
      why.c_str());
  std::exit(2);
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--skip-transfer") {
      o.transfer = false;
      continue;
    }
    if (flag == "--skip-warm-start") {
      o.warm_start = false;
      continue;
    }
    if (i + 1 >= argc) Usage("missing the value of " + flag);
    const char* value = argv[++i];
    bool ok = true;
    if (flag == "--worker")
      o.worker = value;
    else if (flag == "--first")
      o.first = value;
    else if (flag == "--second")
      o.second = value;
    else if (flag == "--dir")
      o.dir = value;
    else if (flag == "--trials")
      ok = absl::SimpleAtoi(value, &o.trials);
    else if (flag == "--batch")
      ok = absl::SimpleAtoi(value, &o.batch);
    else if (flag == "--threads")
      ok = absl::SimpleAtoi(value, &o.threads);
    else if (flag == "--seed")
      ok = absl::SimpleAtoi(value, &o.seed);
    else if (flag == "--min-time")
      ok = absl::SimpleAtod(value, &o.min_time_s);
    else if (flag == "--records")
      ok = absl::SimpleAtoi(value, &o.records);
    else if (flag == "--workloads")
      ok = absl::SimpleAtoi(value, &o.workloads);
    else
      Usage("unknown flag " + flag);
    if (!ok) Usage("bad value for " + flag);
  }
  if (o.transfer && o.worker.empty()) Usage("--worker is required");
  if (o.trials < 1 || o.batch < 1 || o.threads < 1 || o.records < 1 ||
      o.workloads < 1)
    Usage("counts must be positive");
  if (o.dir.empty()) {
    o.dir = (std::filesystem::temp_directory_path() /
             absl::StrCat("bench_transfer.", getpid()))
                .string();
  }
  return o;
}

absl::StatusOr<std::unique_ptr<db::Database>> FreshDb(const Options& o,
                                                      const std::string& name) {
  const std::string path = (std::filesystem::path(o.dir) / name).string();
  db::RemoveDatabaseFiles(path);
  db::OpenOptions options;
  options.mode = db::OpenOptions::Mode::kCreate;
  options.durable = false;
  return db::Database::Open(path, options);
}

// Trials until a trial's median was at most `target_s`; nullopt: never.
std::optional<int64_t> TrialsToReach(const tuner::TuneReport& report,
                                     double target_s) {
  for (size_t i = 0; i < report.history.size(); ++i) {
    const tuner::TuneReport::Trial& t = report.history[i];
    if (t.status == proto::MEASURE_OK && t.median_s > 0 &&
        t.median_s <= target_s)
      return static_cast<int64_t>(i + 1);
  }
  return std::nullopt;
}

std::string Count(const std::optional<int64_t>& n) {
  return n ? absl::StrCat(*n) : std::string("-");
}

absl::Status Transfer(const Options& o, const Target& target) {
  runner::LocalRunnerOptions runner_options;
  runner_options.worker_argv = {o.worker};
  runner_options.timeout_s = 30;
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<runner::LocalRunner> runner,
                         runner::LocalRunner::Start(runner_options));
  tuner::MeasureFn measure = [&](const proto::MeasureRequest& request) {
    return runner->Measure(request);
  };
  tuner::TuneOptions options;
  options.max_trials = o.trials;
  options.batch_size = o.batch;
  options.seed = o.seed;
  options.min_time_s = o.min_time_s;
  options.remeasure_top = 0;  // the curves, not the final ranking
  options.lathe_version = "bench";
  auto task_of = [&](const std::string& spec) -> absl::StatusOr<tuner::Task> {
    LATHE_ASSIGN_OR_RETURN(Workload workload, ParseWorkloadSpec(spec));
    return tuner::MakeTask(workload, target, 1);
  };

  std::printf("first  %s\nsecond %s\n%lld trials each, batch %d, %d thread%s\n",
              o.first.c_str(), o.second.c_str(),
              static_cast<long long>(o.trials), o.batch, o.threads,
              o.threads == 1 ? "" : "s");
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<db::Database> cold_db,
                         FreshDb(o, "cold.db"));
  LATHE_ASSIGN_OR_RETURN(const tuner::Task second, task_of(o.second));
  LATHE_ASSIGN_OR_RETURN(const tuner::Task first_task, task_of(o.first));
  std::vector<tuner::Task> tasks = {second};
  LATHE_ASSIGN_OR_RETURN(tuner::TuneReport cold,
                         tuner::Tune(tasks, *cold_db, measure, options));
  std::printf("cold: second task from an empty database: %.1f s\n",
              cold.wall_s);

  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<db::Database> warm_db,
                         FreshDb(o, "warm.db"));
  tasks = {first_task};
  LATHE_ASSIGN_OR_RETURN(tuner::TuneReport first,
                         tuner::Tune(tasks, *warm_db, measure, options));
  std::printf("first task: %.1f s\n", first.wall_s);
  // The first task's records alone, without its model (a database merged
  // from elsewhere): what the model learns from other workloads' records.
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<db::Database> records_db,
                         FreshDb(o, "records_only.db"));
  std::vector<proto::Record> records;
  LATHE_RETURN_IF_ERROR(warm_db->ForEachRecord([&](const proto::Record& r) {
    records.push_back(r);
    return absl::OkStatus();
  }));
  LATHE_RETURN_IF_ERROR(records_db->Commit(records).status());
  tasks = {second};
  LATHE_ASSIGN_OR_RETURN(tuner::TuneReport warm,
                         tuner::Tune(tasks, *warm_db, measure, options));
  std::printf(
      "warm: second task after the first: %.1f s (warm start %.2f s: %lld "
      "rows of %lld other workload%s, saved model %s)\n",
      warm.wall_s, warm.warm_start_s,
      static_cast<long long>(warm.warm_rows_other),
      static_cast<long long>(warm.warm_workloads_other),
      warm.warm_workloads_other == 1 ? "" : "s",
      warm.loaded_model ? "loaded" : "none");

  tasks = {second};
  LATHE_ASSIGN_OR_RETURN(tuner::TuneReport records_only,
                         tuner::Tune(tasks, *records_db, measure, options));
  std::printf(
      "records only: second task with the first's records, no saved model: "
      "%.1f s (warm start %.2f s)\n",
      records_only.wall_s, records_only.warm_start_s);

  if (!cold.tasks[0].best_s || !warm.tasks[0].best_s ||
      !records_only.tasks[0].best_s)
    return absl::InternalError("a run measured nothing OK");
  const double best = std::min({*cold.tasks[0].best_s, *warm.tasks[0].best_s,
                                *records_only.tasks[0].best_s});
  const double flops = static_cast<double>(second.flops);
  std::printf(
      "best cold %.1f GFLOP/s, warm %.1f GFLOP/s, records only %.1f GFLOP/s\n",
      cold.tasks[0].best_gflops, warm.tasks[0].best_gflops,
      records_only.tasks[0].best_gflops);
  std::printf("%-24s %8s %8s %13s\n", "trials to reach", "cold", "warm",
              "records only");
  for (double within : {0.5, 0.25, 0.1, 0.05}) {
    const double target_s = best * (1 + within);
    std::printf(
        "%-24s %8s %8s %13s\n",
        absl::StrCat("within ", within * 100, "% (",
                     static_cast<int>(flops / target_s * 1e-9), " GFLOP/s)")
            .c_str(),
        Count(TrialsToReach(cold, target_s)).c_str(),
        Count(TrialsToReach(warm, target_s)).c_str(),
        Count(TrialsToReach(records_only, target_s)).c_str());
  }
  // The saved model ranked the warm run's first batch; its pairwise accuracy
  // there (on programs it had not seen). The cold run's first batch is
  // random: its model had not trained yet.
  if (warm.loaded_model && !warm.judged_batches.empty()) {
    std::printf("warm run's first batch: pairwise accuracy %.2f\n",
                warm.judged_batches.front().row.accuracy.value_or(0));
  }
  return absl::OkStatus();
}

// A cost model that times its trainings (delegating to XGBoost).
class TimedModel : public tuner::CostModel {
 public:
  explicit TimedModel(double* train_s) : train_s_(train_s) {}
  absl::Status Train(const tuner::TrainingSet& data) override {
    const auto start = std::chrono::steady_clock::now();
    absl::Status status = model_.Train(data);
    *train_s_ += Since(start);
    return status;
  }
  absl::StatusOr<std::vector<double>> Predict(
      const std::vector<std::vector<float>>& features) const override {
    return model_.Predict(features);
  }
  bool trained() const override { return model_.trained(); }
  absl::StatusOr<std::string> Save() const override { return model_.Save(); }
  absl::Status Load(const std::string& bytes) override {
    return model_.Load(bytes);
  }

 private:
  tuner::XgbCostModel model_;
  double* train_s_;
};

absl::Status WarmStart(const Options& o, const Target& target) {
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<db::Database> db,
                         FreshDb(o, "warm_start.db"));
  const proto::TargetInfo info = TargetInfoOf(target, "");
  const auto filling = std::chrono::steady_clock::now();
  const int64_t per_workload = (o.records + o.workloads - 1) / o.workloads;
  int64_t committed = 0;
  for (int w = 0; w < o.workloads; ++w) {
    const std::string spec =
        absl::StrCat("matmul:M=", 64 * (1 + w % 3), ",N=", 64 * (2 + w / 3),
                     ",K=", 64 * (1 + w % 2));
    LATHE_ASSIGN_OR_RETURN(Workload workload, ParseWorkloadSpec(spec));
    LATHE_ASSIGN_OR_RETURN(tuner::Task task,
                           tuner::MakeTask(workload, target, 1));
    std::vector<proto::Record> batch;
    std::vector<std::string> seen;
    for (int64_t i = 0; i < per_workload * 4 &&
                        static_cast<int64_t>(batch.size()) < per_workload;
         ++i) {
      const int space = static_cast<int>(i % task.spaces.size());
      absl::StatusOr<tuner::Candidate> candidate = tuner::BuildCandidate(
          task, space, task.spaces[space], {}, static_cast<uint64_t>(i));
      if (!candidate.ok() ||
          std::find(seen.begin(), seen.end(), candidate->structural_hash) !=
              seen.end())
        continue;
      seen.push_back(candidate->structural_hash);
      proto::MeasureResult result;
      result.set_status(proto::MEASURE_OK);
      result.set_structural_hash(candidate->structural_hash);
      for (int r = 0; r < 3; ++r)
        result.add_times_s(1e-4 * (1 + static_cast<double>(i % 97) / 10));
      batch.push_back(tuner::MeasurementRecord(
          task.workload, info, candidate->trace, candidate->structural_hash,
          result, {"synthetic", "bench", ""}));
    }
    LATHE_ASSIGN_OR_RETURN(db::CommitResult added, db->Commit(batch));
    committed += added.added;
  }
  std::printf("warm start: %lld records of %d workloads made in %.1f s\n",
              static_cast<long long>(committed), o.workloads, Since(filling));

  LATHE_ASSIGN_OR_RETURN(Workload workload,
                         ParseWorkloadSpec("matmul:M=96,N=160,K=96"));
  LATHE_ASSIGN_OR_RETURN(tuner::Task task,
                         tuner::MakeTask(workload, target, 1));
  std::vector<tuner::Task> tasks = {task};
  double train_s = 0;
  tuner::TuneOptions options;
  options.max_trials = 0;  // the warm start alone
  options.remeasure_top = 0;
  options.make_model = [&] { return std::make_unique<TimedModel>(&train_s); };
  tuner::MeasureFn unused =
      [](const proto::MeasureRequest&) -> absl::StatusOr<proto::MeasureResult> {
    return absl::InternalError("nothing is measured");
  };
  LATHE_ASSIGN_OR_RETURN(tuner::TuneReport report,
                         tuner::Tune(tasks, *db, unused, options));
  std::printf(
      "warm start of a new task: %.2f s for %lld rows of %lld workloads "
      "(of which one training on them %.2f s)\n",
      report.warm_start_s, static_cast<long long>(report.warm_rows_other),
      static_cast<long long>(report.warm_workloads_other), train_s);
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  std::filesystem::create_directories(o.dir);
  const Target target = HostTarget(o.threads);
  std::printf(
      "target %s; the machine may be shared: timings move with its "
      "load\n",
      target.ToString().c_str());
  if (o.warm_start) {
    absl::Status status = WarmStart(o, target);
    if (!status.ok()) {
      std::fprintf(stderr, "bench_transfer: %s\n", status.ToString().c_str());
      return 1;
    }
  }
  if (o.transfer) {
    absl::Status status = Transfer(o, target);
    if (!status.ok()) {
      std::fprintf(stderr, "bench_transfer: %s\n", status.ToString().c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace lathe

int main(int argc, char** argv) { return lathe::Main(argc, argv); }
