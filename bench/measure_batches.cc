// bench_measure_batches: the local measurement pipeline on a tuning run's own
// candidates, with and without building ahead (bench/README.md,
// "bench_measure_batches").
//
// Reads the records of one task from a database that `lathe tune` or
// bench_tune filled, in commit order, takes --batches batches of --batch
// records from --from on, and measures them as the tuner does (tuner/search/
// measurement_rounds.h: --rounds rounds over each batch, forwards and back,
// one LocalRunner whose worker is `lathe-runner-worker`), once with each
// request naming the next candidates of its round (MeasureRequest.
// build_ahead, as the tuner sends them) and once without, alternating
// A B B A ... for --repeat pairs, each with a fresh worker (empty JIT cache).
// It prints each pass's wall time and what the worker reported: the builds'
// time, the part done ahead, and check + timing.
//
//   bench_measure_batches --db FILE --workload SPEC --worker PATH
//       [--threads 1] [--from 500] [--batches 4] [--batch 32] [--rounds 3]
//       [--min-time 0.1] [--repeat 1]
// Not a test: it reads a database a tuning run produced.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "base/status_macros.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/workload/spec.h"
#include "database/database.h"
#include "runner/local_runner.h"
#include "tuner/cost_model/cost_model.h"
#include "tuner/search/measurement_rounds.h"
#include "tuner/search/task.h"
#include "tuner/search/training_label.h"

namespace lathe {
namespace {

struct Options {
  std::string db, workload, worker;
  int threads = 1;
  int64_t from = 500;
  int batches = 4;
  int batch = 32;
  int rounds = 3;
  double min_time_s = 0.1;
  int repeat = 1;
};

double NowSec() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Pass {
  double wall_s = 0, build_s = 0, build_ahead_s = 0, run_s = 0;
  int64_t built_ahead = 0, failed = 0;
  // Per record, the label the tuner would train on (0: failed).
  std::vector<double> labels;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(
      stderr,
      "bench_measure_batches: %s\nusage: bench_measure_batches --db FILE "
      "--workload SPEC --worker PATH [--threads N] [--from ROW] [--batches N] "
      "[--batch N] [--rounds N] [--min-time S] [--repeat N]\n",
      why);
  std::exit(2);
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) Usage(("missing the value of " + flag).c_str());
    const char* value = argv[++i];
    bool ok = true;
    if (flag == "--db")
      o.db = value;
    else if (flag == "--workload")
      o.workload = value;
    else if (flag == "--worker")
      o.worker = value;
    else if (flag == "--threads")
      ok = absl::SimpleAtoi(value, &o.threads);
    else if (flag == "--from")
      ok = absl::SimpleAtoi(value, &o.from);
    else if (flag == "--batches")
      ok = absl::SimpleAtoi(value, &o.batches);
    else if (flag == "--batch")
      ok = absl::SimpleAtoi(value, &o.batch);
    else if (flag == "--rounds")
      ok = absl::SimpleAtoi(value, &o.rounds);
    else if (flag == "--min-time")
      ok = absl::SimpleAtod(value, &o.min_time_s);
    else if (flag == "--repeat")
      ok = absl::SimpleAtoi(value, &o.repeat);
    else
      Usage(("unknown flag " + flag).c_str());
    if (!ok) Usage(("bad value for " + flag).c_str());
  }
  if (o.db.empty() || o.workload.empty() || o.worker.empty()) {
    Usage("--db, --workload and --worker are required");
  }
  if (o.batch < 1 || o.batches < 1 || o.rounds < 1 || o.repeat < 1 ||
      o.from < 0) {
    Usage("counts must be positive");
  }
  return o;
}

// The share of pairs (within batches) that `a` orders as `truth` does,
// batch by batch, pairs with a failure on either side left out.
double PairAgreement(const std::vector<double>& a,
                     const std::vector<double>& truth, int batch) {
  std::vector<double> x, y;
  std::vector<int> groups;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] <= 0 || truth[i] <= 0) continue;
    x.push_back(a[i]);
    y.push_back(truth[i]);
    groups.push_back(static_cast<int>(i) / batch);
  }
  return tuner::PairwiseAccuracy(x, y, groups);
}

absl::StatusOr<Pass> MeasurePass(const Options& o, const tuner::Task& task,
                                 const std::vector<proto::Record>& records,
                                 bool hints) {
  runner::LocalRunnerOptions runner_options;
  runner_options.worker_argv = {o.worker};
  runner_options.timeout_s = 30;
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<runner::LocalRunner> runner,
                         runner::LocalRunner::Start(runner_options));
  const tuner::RoundSettings settings =
      tuner::SettingsOfRound(o.min_time_s, 5, 200, o.rounds);
  Pass pass;
  const double start = NowSec();
  // Every round's result, as the worker reported it.
  auto measure = [&](const proto::MeasureRequest& request)
      -> absl::StatusOr<proto::MeasureResult> {
    absl::StatusOr<proto::MeasureResult> r = runner->Measure(request);
    if (!r.ok()) return r;
    pass.build_s += r->build_ms() * 1e-3;
    pass.run_s += r->run_ms() * 1e-3;
    if (r->built_ahead()) {
      pass.build_ahead_s += r->build_ms() * 1e-3;
      ++pass.built_ahead;
    }
    return r;
  };
  for (size_t first = 0; first < records.size();
       first += static_cast<size_t>(o.batch)) {
    const size_t n =
        std::min(records.size() - first, static_cast<size_t>(o.batch));
    std::vector<const proto::Trace*> traces;
    for (size_t i = 0; i < n; ++i)
      traces.push_back(&records[first + i].trace());
    LATHE_ASSIGN_OR_RETURN(
        std::vector<std::optional<proto::MeasureResult>> results,
        tuner::MeasureBatchInRounds(task, traces, settings, o.rounds,
                                    /*flush_cache=*/false, hints, measure));
    for (const std::optional<proto::MeasureResult>& r : results) {
      if (r->status() != proto::MEASURE_OK) ++pass.failed;
      pass.labels.push_back(tuner::TrainingThroughput(task.flops, *r));
    }
  }
  pass.wall_s = NowSec() - start;
  return pass;
}

int Main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(o.workload);
  if (!workload.ok()) Usage(std::string(workload.status().message()).c_str());
  absl::StatusOr<tuner::Task> task =
      tuner::MakeTask(*workload, HostTarget(o.threads), 1);
  if (!task.ok()) Usage(std::string(task.status().message()).c_str());
  db::OpenOptions open;
  open.mode = db::OpenOptions::Mode::kReadOnly;
  absl::StatusOr<std::unique_ptr<db::Database>> db =
      db::Database::Open(o.db, open);
  if (!db.ok()) Usage(std::string(db.status().message()).c_str());
  absl::StatusOr<std::vector<proto::Record>> all =
      (*db)->RecordsOfTask(task->key, task->target.ToString());
  if (!all.ok()) Usage(std::string(all.status().message()).c_str());
  const size_t from = std::min(all->size(), static_cast<size_t>(o.from));
  const size_t to =
      std::min(all->size(), from + static_cast<size_t>(o.batches * o.batch));
  const std::vector<proto::Record> records(
      all->begin() + static_cast<std::ptrdiff_t>(from),
      all->begin() + static_cast<std::ptrdiff_t>(to));
  if (records.empty()) Usage("no records in that range");
  std::printf(
      "%zu records (rows %zu-%zu of %zu) of %s on %s, batches of %d, %d "
      "rounds, "
      "%.3f s per candidate\n",
      records.size(), from, to - 1, all->size(), o.workload.c_str(),
      task->target.ToString().c_str(), o.batch, o.rounds, o.min_time_s);
  std::printf("%-14s %8s %9s %13s %11s %9s\n", "pass", "wall s", "build s",
              "of it ahead", "check+time", "failed");
  std::vector<double> recorded;  // the run's own labels
  for (const proto::Record& r : records)
    recorded.push_back(tuner::TrainingThroughput(task->flops, r));
  std::vector<Pass> passes[2];  // one by one, build ahead
  for (int rep = 0; rep < o.repeat; ++rep) {
    for (int side = 0; side < 2; ++side) {
      const bool hints = (rep % 2 == 0) == (side == 1);  // A B, then B A
      absl::StatusOr<Pass> pass = MeasurePass(o, *task, records, hints);
      if (!pass.ok()) {
        std::fprintf(stderr, "bench_measure_batches: %s\n",
                     std::string(pass.status().message()).c_str());
        return 1;
      }
      std::printf("%-14s %8.1f %9.1f %7.1f (%3lld) %11.1f %9lld\n",
                  hints ? "build ahead" : "one by one", pass->wall_s,
                  pass->build_s, pass->build_ahead_s,
                  static_cast<long long>(pass->built_ahead), pass->run_s,
                  static_cast<long long>(pass->failed));
      std::fflush(stdout);
      passes[hints ? 1 : 0].push_back(*std::move(pass));
    }
  }
  // Does building beside timing disturb the timing? The labels of the two
  // kinds of pass, program by program, and their order against the run's.
  std::printf("labels (the tuner's: fastest samples), %zu programs:\n",
              records.size());
  for (int side = 0; side < 2; ++side) {
    double agreement = 0;
    for (const Pass& p : passes[side]) {
      agreement += PairAgreement(p.labels, recorded, o.batch) /
                   static_cast<double>(passes[side].size());
    }
    std::printf("  %-12s pairs in the run's order: %.3f\n",
                side == 1 ? "build ahead" : "one by one", agreement);
  }
  std::vector<double> ratios;  // build ahead / one by one, same repeat
  for (size_t p = 0; p < passes[0].size(); ++p) {
    for (size_t i = 0; i < records.size(); ++i) {
      if (passes[0][p].labels[i] > 0 && passes[1][p].labels[i] > 0) {
        ratios.push_back(passes[1][p].labels[i] / passes[0][p].labels[i]);
      }
    }
  }
  std::sort(ratios.begin(), ratios.end());
  if (!ratios.empty()) {
    std::printf(
        "  throughput, build ahead / one by one: median %.3f (quartiles %.3f, "
        "%.3f)\n",
        ratios[ratios.size() / 2], ratios[ratios.size() / 4],
        ratios[3 * ratios.size() / 4]);
  }
  return 0;
}

}  // namespace
}  // namespace lathe

int main(int argc, char** argv) { return lathe::Main(argc, argv); }
