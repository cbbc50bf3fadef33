// bench_tune: the tuning benchmark. For fp32 matmul 1024^3 (on 1
// and 2 threads) and conv2d_nchw N=1 C=K=128 28x28 3x3 pad 1 (on 1 thread),
// each configuration:
//  1. tunes the workload from an empty database, as `lathe tune` does (the
//     default CPU design spaces, the XGBoost model, local measurement in a
//     sandboxed worker -- this program, re-executed as "runner-worker");
//  2. prints the tuning curve (best GFLOP/s so far, as the runner measured
//     it) at trial checkpoints with the wall time at each, the best measured
//     by the worker once more after tuning, the search overhead (the share
//     of wall time spent outside measurement) and the cost model's pairwise
//     accuracy on batches it had not trained on; then measures the last
//     judged batches again (--remeasure-batches, default 2) to show how far
//     the measurement agrees with itself on them, beside the model
//     (measurement_agreement.h);
//  3. after tuning, in this process: replays the best record's trace,
//     compiles it, checks it against the peer (OpenBLAS sgemm, oneDNN's
//     convolution) and times the two interleaved on the same thread count
//     (peers.h; bench/README.md), and prints the ratio.
// The issue's targets are printed beside the figures.
//
// Run it with OpenBLAS free to pick its own kernel (bench/README.md,
// "Peers"):
//   env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE build/bench/bench_tune
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "bench/measurement_agreement.h"
#include "bench/peers.h"
#include "bench/tuning_curve.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/kernel_program.h"
#include "compiler/codegen/llvm/jit.h"
#include "compiler/schedule/trace.h"
#include "compiler/target/target_info.h"
#include "compiler/workload/spec.h"
#include "database/database.h"
#include "database/record_codec.h"
#include "runner/local_runner.h"
#include "runner/measure_worker.h"
#include "tuner/search/measurement_rounds.h"
#include "tuner/search/task.h"
#include "tuner/search/training_label.h"
#include "tuner/search/tuner.h"

namespace lathe {
namespace {

// The trial counts the curve is printed at (those reached, then the end).
const std::vector<int64_t> kCheckpoints = {16, 32, 64, 128, 256, 500, 1000};
// The issue asks for the model's accuracy "after 500 records".
constexpr int64_t kAccuracyRows = 500;
// The model's accuracy is also printed on the pairs whose labels differ by
// at least this (relative): one measurement orders closer ones like another
// at chance (bench/README.md, "Why the code is as it is"), and no
// user needs a 1% difference ordered.
constexpr double kOrderableGap = 0.01;
// The conv2d layer of the issue (a ResNet-50 layer).
const bench::ConvShape kConv{/*n=*/1,   /*c=*/128, /*h=*/28, /*w=*/28,
                             /*k=*/128, /*r=*/3,   /*s=*/3,  /*pad=*/1};

struct Options {
  bool matmul = true, conv = true;
  std::vector<int> threads;  // empty: matmul on 1 and 2, conv on 1
  int64_t trials = 0;        // 0: 500 for matmul, 1000 for conv
  double time_budget_s = 0;  // per configuration; 0: none
  uint64_t seed = 1;
  int rounds = 15;            // interleaved samples per side (conv: 4x)
  double min_time_s = 0;      // per measurement; 0: the tuner's default
  int measure_rounds = 0;     // 0: the tuner's default
  int remeasure_batches = 2;  // the last judged batches measured again; 0: none
  // With every CPU measuring: search only while a batch is built (the
  // tuner's search_while_building), or, false, before it (to compare).
  bool search_while_building = true;
  std::string db;  // empty: a temporary database per configuration
  std::string json;
};

// One workload on one thread count, and the issue's target for it.
struct Config {
  std::string name;  // "matmul1024" or "conv"
  std::string spec;
  int threads;
  int64_t trials;
  const char* peer;  // "openblas" or "onednn"
  double target;     // tuned / peer
  int64_t within;    // ... within this many trials
};

// One tuned program against the peer, in this process (CompareWithPeer).
struct PeerComparison {
  std::string hash;                // the program's structural hash
  double lathe_s = 0, peer_s = 0;  // interleaved medians
  double lathe_warm_s = 0,
         peer_warm_s = 0;  // the same, the second call of each
  double max_rel_err = 0;
  std::string peer_impl;
  double load_average = 0;  // 1-minute, when the comparison began
};

// Everything printed about one configuration, also written as JSON.
struct Result {
  Config config;
  double flops = 0;  // per call (conv: nominal, padding taps counted)
  std::string target_string;
  int64_t trials = 0;
  int64_t errors = 0;
  bool interrupted = false;
  std::vector<bench::CurvePoint> checkpoints;
  std::vector<bench::CurvePoint> curve;
  double wall_s = 0;
  double measure_s = 0;      // the tuner's: its batches' measurements
  double measure_all_s = 0;  // every measurement, near-tie re-measuring too
  double build_s = 0, run_s = 0;  // the worker's build and check+timing
  double check_s = 0;             // of run_s, the reference checks
  double build_ahead_s = 0;  // of build_s, builds done before their request
  double build_only_s =
      0;  // build-only requests (search_while_building), not in build_s
  int64_t build_only_requests = 0;
  double failed_s = 0;  // measurement time of the candidates that failed
  std::map<std::string, int64_t> failures;  // by status
  std::vector<double> accuracy;             // each judged batch, strict
  std::vector<double> accuracy_apart;  // the same, pairs kOrderableGap apart
  std::vector<int64_t> trained_on;
  std::optional<double> final_best_gflops;  // the database's best after tuning
  std::optional<double> remeasured_gflops;  // it, through the worker again
  // The last judged batches measured again (measurement_agreement.h).
  bench::Agreement agreement;
  std::vector<int64_t>
      remeasured_trained_on;  // rows each batch's model had seen
  double remeasure_s = 0;
  int remeasure_rounds = 0;
  std::string fastest_within_hash;  // bench::FastestWithin of config.within
  PeerComparison tuned;             // the database's best after tuning
  // The fastest of the first config.within trials, when the run had more
  // and it is another program: what "within N trials" found.
  std::optional<PeerComparison> within;
};

// Set by SIGINT: tuning stops after the candidate in flight; the comparison
// with the peer still runs on what was found.
std::atomic<bool> g_stop{false};
extern "C" void OnInterrupt(int) { g_stop.store(true); }

// A database file that goes away with this object (and its WAL files).
class TempDatabase {
 public:
  static absl::StatusOr<TempDatabase> Make() {
    std::string dir =
        (std::filesystem::temp_directory_path() / "lathe-bench-tune-XXXXXX")
            .string();
    if (mkdtemp(dir.data()) == nullptr) {
      return absl::InternalError(
          absl::StrCat("cannot create a temporary folder ", dir, ": ",
                       std::strerror(errno)));
    }
    return TempDatabase(dir);
  }
  TempDatabase(TempDatabase&& other) noexcept : dir_(std::move(other.dir_)) {
    other.dir_.clear();
  }
  ~TempDatabase() {
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  std::string path() const { return dir_ + "/tune.db"; }

 private:
  explicit TempDatabase(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

// A line per 32 trials on stderr while tuning.
void PrintProgress(const tuner::TuneProgress& p, int64_t* next) {
  if (p.trials_done < *next) return;
  *next = p.trials_done + 32;
  std::string best = "-";
  if (!p.tasks.empty() && p.tasks[0].best_s) {
    best = absl::StrFormat("%.1f GFLOP/s", p.tasks[0].best_gflops);
  }
  std::fprintf(stderr, "  [%lld/%lld trials, %.0f s] best %s",
               static_cast<long long>(p.trials_done),
               static_cast<long long>(p.trials_total), p.elapsed_s,
               best.c_str());
  if (p.last_accuracy) {
    std::fprintf(stderr, ", model accuracy %.2f", *p.last_accuracy);
  }
  std::fprintf(stderr, "\n");
}

// The last --remeasure-batches full batches the model was judged on, measured
// again the way the tuner measured them (its rounds, forwards and back over
// the batch), now that the search is over; compared with their labels and
// with the model's scores (measurement_agreement.h).
absl::Status MeasureBatchesAgain(const Options& opt,
                                 const tuner::TuneOptions& tune,
                                 const tuner::Task& task, db::Database& db,
                                 runner::LocalRunner& runner,
                                 const tuner::TuneReport& report,
                                 Result& result) {
  // The last full-sized batches: a run's last batch is often a remainder of
  // a few programs.
  size_t full = 0;
  for (const tuner::TuneReport::JudgedBatch& b : report.judged_batches) {
    full = std::max(full, b.structural_hashes.size());
  }
  std::vector<size_t> chosen;
  for (size_t b = report.judged_batches.size();
       b-- > 0 && static_cast<int>(chosen.size()) < opt.remeasure_batches;) {
    if (report.judged_batches[b].structural_hashes.size() == full)
      chosen.push_back(b);
  }
  std::reverse(chosen.begin(), chosen.end());
  if (chosen.empty()) return absl::OkStatus();
  LATHE_ASSIGN_OR_RETURN(std::vector<proto::Record> records,
                         db.RecordsOfTask(task.key, task.target.ToString()));
  std::map<std::string, const proto::Record*> by_hash;
  for (const proto::Record& r : records) {
    by_hash.emplace(r.structural_hash(), &r);
  }
  const tuner::RoundSettings settings = tuner::SettingsOfRound(
      tune.min_time_s, tune.min_repeats, tune.max_repeats, tune.measure_rounds);
  const double t0 = bench::NowSec();
  std::vector<bench::RemeasuredBatch> batches;
  for (size_t b : chosen) {
    const tuner::TuneReport::JudgedBatch& batch = report.judged_batches[b];
    const size_t n = batch.structural_hashes.size();
    // As the tuner measures a batch (measurement_rounds.h). A program not
    // in the database is never measured.
    std::vector<const proto::Trace*> traces(n, nullptr);
    for (size_t i = 0; i < n; ++i) {
      auto found = by_hash.find(batch.structural_hashes[i]);
      if (found != by_hash.end()) traces[i] = &found->second->trace();
    }
    LATHE_ASSIGN_OR_RETURN(
        std::vector<std::optional<proto::MeasureResult>> results,
        tuner::MeasureBatchInRounds(
            task, traces, settings, tune.measure_rounds, tune.flush_cache,
            /*build_ahead=*/true, [&](const proto::MeasureRequest& request) {
              return runner.Measure(request);
            }));
    bench::RemeasuredBatch remeasured{batch.predicted, batch.throughputs, {}};
    for (const std::optional<proto::MeasureResult>& r : results) {
      remeasured.again.push_back(r ? tuner::TrainingThroughput(task.flops, *r)
                                   : 0);
    }
    batches.push_back(std::move(remeasured));
    result.remeasured_trained_on.push_back(batch.row.trained_on);
  }
  result.agreement = bench::MeasureAgreement(batches);
  result.remeasure_rounds = tune.measure_rounds;
  result.remeasure_s = bench::NowSec() - t0;
  return absl::OkStatus();
}

// 1. Tunes the configuration's workload into `db`.
absl::Status TuneConfig(const Options& opt, const Config& config,
                        const tuner::Task& task_in, db::Database& db,
                        Result& result) {
  std::vector<tuner::Task> tasks = {task_in};
  runner::LocalRunnerOptions runner_options;
  runner_options.worker_argv = {"/proc/self/exe", "runner-worker"};
  runner_options.timeout_s = 30;  // as `lathe tune`
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<runner::LocalRunner> runner,
                         runner::LocalRunner::Start(runner_options));

  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  tuner::TuneOptions tune;
  tune.max_trials = config.trials;
  tune.time_budget_s = opt.time_budget_s;
  tune.seed = opt.seed;
  if (opt.min_time_s > 0) tune.min_time_s = opt.min_time_s;
  if (opt.measure_rounds > 0) tune.measure_rounds = opt.measure_rounds;
  tune.job = absl::StrCat("bench-tune-", config.name, "-t", config.threads, "-",
                          getpid());
  tune.runner_name = absl::StrCat("local@", host);
  tune.lathe_version = "bench_tune";
  tune.device = HostDeviceDescription();
  tune.stop = &g_stop;
  // As `lathe tune`: a search running beside a timing that uses every core
  // would disturb it, so then it runs only while a batch is built.
  tune.overlap = config.threads < AllowedCpuCount();
  tune.search_while_building = !tune.overlap && opt.search_while_building;
  int64_t next_progress = 32;
  tune.on_progress = [&](const tuner::TuneProgress& p) {
    PrintProgress(p, &next_progress);
  };
  // Every measurement, timed here too: the tuner's measure_s leaves out the
  // re-measuring of near-ties at the end.
  tuner::MeasureFn measure = [&](const proto::MeasureRequest& request) {
    const double t0 = bench::NowSec();
    absl::StatusOr<proto::MeasureResult> r = runner->Measure(request);
    const double busy = bench::NowSec() - t0;
    result.measure_all_s += busy;
    if (r.ok() && request.build_only()) {
      // Its builds are counted when their requests take them (built_ahead).
      result.build_only_s += busy;
      ++result.build_only_requests;
    } else if (r.ok()) {
      result.build_s += r->build_ms() * 1e-3;
      if (r->built_ahead()) result.build_ahead_s += r->build_ms() * 1e-3;
      result.run_s += r->run_ms() * 1e-3;
      result.check_s += r->check_ms() * 1e-3;
      if (r->status() != proto::MEASURE_OK) {
        result.failed_s += busy;
        ++result.failures[proto::MeasureStatus_Name(r->status())];
      }
    }
    return r;
  };

  struct sigaction action = {}, previous = {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previous);
  absl::StatusOr<tuner::TuneReport> report =
      tuner::Tune(tasks, db, measure, tune);
  sigaction(SIGINT, &previous, nullptr);
  if (!report.ok()) return report.status();

  result.trials = report->trials;
  result.errors = report->tasks.empty() ? 0 : report->tasks[0].errors;
  result.interrupted = report->interrupted;
  result.curve = bench::TuningCurve(report->history, 0, task_in.flops);
  result.checkpoints = bench::AtCheckpoints(result.curve, kCheckpoints);
  result.fastest_within_hash =
      bench::FastestWithin(report->history, 0, config.within);
  result.wall_s = report->wall_s;
  result.measure_s = report->measure_s;
  result.accuracy = report->BatchAccuracy();
  result.accuracy_apart =
      bench::AccuracyOnPairsApart(report->judged_batches, kOrderableGap);
  for (const tuner::TuneReport::JudgedBatch& b : report->judged_batches)
    result.trained_on.push_back(b.row.trained_on);
  if (!report->tasks.empty() && report->tasks[0].best_s) {
    result.final_best_gflops = report->tasks[0].best_gflops;
  }

  // The best once more through the worker, now that the search is over and
  // just before this process times it: the two readings side by side show
  // what the sandbox (a pinned worker, back-to-back calls) changes.
  LATHE_ASSIGN_OR_RETURN(
      std::optional<db::Match> best,
      db.Best(task_in.key, TargetInfoOf(task_in.target, tune.device)));
  if (best) {
    proto::MeasureRequest request;
    request.set_workload(task_in.workload.CanonicalForm());
    *request.mutable_trace() = best->record.trace();
    request.set_target(task_in.target.ToString());
    request.set_min_time_s(tune.min_time_s * 2);
    request.set_min_repeats(tune.min_repeats);
    request.set_max_repeats(tune.max_repeats);
    request.set_check_seed(1);
    // Not through `measure`: this is not part of the tuning run's time.
    LATHE_ASSIGN_OR_RETURN(proto::MeasureResult again,
                           runner->Measure(request));
    if (again.status() == proto::MEASURE_OK) {
      proto::Record summary;
      *summary.mutable_times_s() = again.times_s();
      db::SummarizeTimes(summary);
      result.remeasured_gflops =
          static_cast<double>(task_in.flops) / summary.median_s() * 1e-9;
    }
  }
  if (report->interrupted) return absl::OkStatus();
  // A figure to read the accuracy by, not one of the run's: a failure here
  // is reported and the comparison with the peer still runs.
  if (absl::Status again =
          MeasureBatchesAgain(opt, tune, task_in, db, *runner, *report, result);
      !again.ok()) {
    result.agreement = {};
    std::fprintf(stderr,
                 "note: measuring the judged batches again failed: %s\n",
                 std::string(again.message()).c_str());
  }
  return absl::OkStatus();
}

// 3. A measured program (the database's best, or the fastest within the
// target's trials), rebuilt here and timed against the peer.
absl::StatusOr<PeerComparison> CompareWithPeer(const Options& opt,
                                               const Config& config,
                                               const tuner::Task& task,
                                               const proto::Record& record) {
  PeerComparison result;
  result.hash = record.structural_hash();
  LATHE_ASSIGN_OR_RETURN(Trace trace, Trace::FromProto(record.trace()));
  LATHE_ASSIGN_OR_RETURN(KernelProgram program,
                         MakeKernelProgram(task.workload, &trace, task.target));
  // The database stores the hash the worker computed; the program timed here
  // must be the one it measured.
  if (program.structural_hash != result.hash) {
    return absl::InternalError(absl::StrCat(
        config.spec, ": record ", record.id(), "'s trace replays to program ",
        program.structural_hash, " here, not to the measured ", result.hash));
  }
  LATHE_ASSIGN_OR_RETURN(CompiledKernel kernel,
                         Compile(program.lowered, task.target));

  std::unique_ptr<bench::Floats> in0, in1, out_lathe, out_peer;
  std::unique_ptr<bench::OneDnnConv> conv;
  std::function<void()> run_peer;
  if (config.name == "matmul1024") {
    const int64_t n = 1024;
    in0 = std::make_unique<bench::Floats>(n * n);
    in1 = std::make_unique<bench::Floats>(n * n);
    out_peer = std::make_unique<bench::Floats>(n * n);
    bench::FillUniform(in0.get(), 1);
    bench::FillUniform(in1.get(), 2);
    bench::SetPeerThreads(config.threads);
    run_peer = [&, n] {
      bench::Sgemm(n, n, n, in0->data, in1->data, out_peer->data);
    };
    result.peer_impl = "cblas_sgemm";
  } else {
    const bench::ConvShape& s = kConv;
    in0 = std::make_unique<bench::Floats>(s.n * s.c * s.h * s.w);
    in1 = std::make_unique<bench::Floats>(s.k * s.c * s.r * s.s);
    out_peer = std::make_unique<bench::Floats>(s.n * s.k * s.p() * s.q());
    bench::FillUniform(in0.get(), 3);
    bench::FillUniform(in1.get(), 4);
    conv = bench::OneDnnConv::Create(s, config.threads, in0->data, in1->data);
    run_peer = [&] { conv->Run(); };
    result.peer_impl = conv->Impl();
  }
  out_lathe = std::make_unique<bench::Floats>(out_peer->size);
  auto run_lathe = [&] {
    kernel.Call({in0->data, in1->data, out_lathe->data});
  };

  // Correctness first: the same inputs through both; NaNs in Lathe's output
  // show elements it did not write.
  std::memset(out_lathe->data, 0xff, out_lathe->size * 4);
  LATHE_RETURN_IF_ERROR(kernel.Run({in0->data, in1->data, out_lathe->data}));
  run_peer();
  if (conv) conv->CopyOutput(out_peer->data);
  const bench::Error e =
      bench::Compare(out_lathe->data, out_peer->data, out_peer->size);
  result.max_rel_err = e.rel;
  if (!(e.rel < 1e-4)) {
    return absl::InternalError(absl::StrCat(
        config.spec, ": the tuned kernel ", result.hash, " disagrees with ",
        config.peer, " (max rel err ", e.rel, ")"));
  }
  double load[1] = {0};
  if (getloadavg(load, 1) == 1) result.load_average = load[0];
  const int rounds = conv ? opt.rounds * 4 : opt.rounds;
  const bench::InterleavedTimes t =
      bench::TimeInterleaved(run_lathe, run_peer, rounds);
  result.lathe_s = t.a_s;
  result.peer_s = t.b_s;
  result.lathe_warm_s = t.a_warm_s;
  result.peer_warm_s = t.b_warm_s;
  return result;
}

// The record of program `hash` of the task (OK, the last measured).
absl::StatusOr<proto::Record> RecordOfProgram(db::Database& db,
                                              const tuner::Task& task,
                                              const std::string& hash) {
  LATHE_ASSIGN_OR_RETURN(std::vector<proto::Record> records,
                         db.RecordsOfTask(task.key, task.target.ToString()));
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    if (it->structural_hash() == hash && it->status() == proto::MEASURE_OK)
      return *it;
  }
  return absl::NotFoundError(absl::StrCat("no record of program ", hash));
}

std::string AccuracyText(const bench::AccuracySummary& a) {
  if (a.batches == 0) return "n/a (no batch)";
  return absl::StrFormat("%.3f (%d batch%s)", a.mean, a.batches,
                         a.batches == 1 ? "" : "es");
}

// One in-process comparison with the peer, titled `what`.
void PrintComparison(const Result& r, const PeerComparison& p,
                     const std::string& what) {
  const Config& c = r.config;
  const double flops = r.flops;
  std::printf("%s, in this process, interleaved (%s %s, %d thread%s):\n",
              what.c_str(), c.peer, p.peer_impl.c_str(), c.threads,
              c.threads == 1 ? "" : "s");
  std::printf("  tuned %s  %7.1f GFLOP/s (%.3f ms)   max rel err %.2g\n",
              p.hash.substr(0, 12).c_str(), flops / p.lathe_s * 1e-9,
              p.lathe_s * 1e3, p.max_rel_err);
  std::printf("  %-18s  %7.1f GFLOP/s (%.3f ms)\n", c.peer,
              flops / p.peer_s * 1e-9, p.peer_s * 1e3);
  std::printf("  ratio tuned/%s: %.2f\n", c.peer, p.peer_s / p.lathe_s);
  std::printf(
      "  the second calls (each side again right after its first): tuned %.3f "
      "ms, %s "
      "%.3f ms, ratio %.2f\n",
      p.lathe_warm_s * 1e3, c.peer, p.peer_warm_s * 1e3,
      p.peer_warm_s / p.lathe_warm_s);
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  std::printf("  load average %.2f on %ld cpus%s\n", p.load_average, cpus,
              p.load_average >= cpus
                  ? ": the machine is busy, the figures say little"
                  : "");
}

// 2. and 3. in words.
void Print(const Result& r) {
  const Config& c = r.config;
  std::printf("\ntuning curve (best so far, as the runner measured it):\n");
  std::printf("  %7s  %9s  %12s\n", "trials", "wall s", "best GFLOP/s");
  for (const bench::CurvePoint& p : r.checkpoints) {
    std::printf("  %7lld  %9.1f  %12.1f\n", static_cast<long long>(p.trials),
                p.at_s, p.best_gflops);
  }
  if (r.final_best_gflops) {
    std::printf("  %7s  %9.1f  %12.1f   (after re-measuring near-ties)\n",
                "end", r.wall_s, *r.final_best_gflops);
  }
  if (r.remeasured_gflops) {
    std::printf(
        "  the best measured by the worker once more after tuning: "
        "%.1f GFLOP/s\n",
        *r.remeasured_gflops);
  }
  std::vector<std::string> failures;
  for (const auto& [status, n] : r.failures) {
    failures.push_back(absl::StrCat(status, " ", n));
  }
  std::printf(
      "  %lld of %lld candidates failed%s%s%s, %.1f s of measurement%s\n",
      static_cast<long long>(r.errors), static_cast<long long>(r.trials),
      failures.empty() ? "" : " (", absl::StrJoin(failures, ", ").c_str(),
      failures.empty() ? "" : ")", r.failed_s,
      r.interrupted ? "; interrupted" : "");

  const double overhead = bench::SearchOverhead(r.measure_all_s, r.wall_s);
  std::printf(
      "search overhead: %.1f%% of %.1f s wall outside measurement "
      "(measurement %.1f s: worker build %.1f s of which %.1f s done ahead "
      "beside "
      "other candidates, check+timing %.1f s of which checks %.1f s, the rest "
      "process and pipe round trips, and waits for builds)\n",
      overhead * 100, r.wall_s, r.measure_all_s, r.build_s, r.build_ahead_s,
      r.run_s, r.check_s);
  if (r.build_only_requests > 0) {
    std::printf(
        "  of the measurement, %lld build-only requests (a batch built on "
        "every CPU "
        "while the next was searched): %.1f s\n",
        static_cast<long long>(r.build_only_requests), r.build_only_s);
  }
  std::printf(
      "  by the tuner's measure_s (%.1f s, without the final near-tie "
      "re-measuring): %.1f%%\n",
      r.measure_s, bench::SearchOverhead(r.measure_s, r.wall_s) * 100);

  std::printf(
      "cost model pairwise accuracy on each batch before training on it:\n");
  std::printf(
      "  trained on >= %lld rows: %s\n", static_cast<long long>(kAccuracyRows),
      AccuracyText(bench::MeanAccuracy(r.accuracy, r.trained_on, kAccuracyRows))
          .c_str());
  std::printf("    on the pairs whose labels are more than %.0f%% apart: %s\n",
              kOrderableGap * 100,
              AccuracyText(bench::MeanAccuracy(r.accuracy_apart, r.trained_on,
                                               kAccuracyRows))
                  .c_str());
  std::printf(
      "  every trained batch:   %s\n",
      AccuracyText(bench::MeanAccuracy(r.accuracy, r.trained_on, 1)).c_str());
  const int64_t bands[] = {1, 128, 256, 500, 0};
  for (int i = 0; i + 1 < 5; ++i) {
    const std::string rows = bands[i + 1] > 0
                                 ? absl::StrCat(bands[i], "-", bands[i + 1] - 1)
                                 : absl::StrCat(bands[i], "+");
    std::printf("  trained on %s rows: %s\n", rows.c_str(),
                AccuracyText(bench::MeanAccuracy(r.accuracy, r.trained_on,
                                                 bands[i], bands[i + 1]))
                    .c_str());
  }

  if (r.agreement.batches > 0) {
    const bench::Agreement& a = r.agreement;
    std::printf(
        "the measurement against itself: the last %d full judged batch%s (the "
        "model had trained on %s rows) measured again after tuning, in %d "
        "round%s as in tuning (%.1f s); pairs in the same order:\n",
        a.batches, a.batches == 1 ? "" : "es",
        absl::StrJoin(r.remeasured_trained_on, ", ").c_str(),
        r.remeasure_rounds, r.remeasure_rounds == 1 ? "" : "s", r.remeasure_s);
    std::printf("  the labels and the re-measurement: %.3f\n",
                a.label_vs_again);
    std::printf("  the model and the labels:          %.3f (its accuracy)\n",
                a.model_vs_label);
    std::printf("  the model and the re-measurement:  %.3f\n",
                a.model_vs_again);
    std::printf("  pairs whose labels differ by less than 1%%: %.0f%%\n",
                a.close_share * 100);
  }

  if (r.tuned.lathe_s > 0) {
    PrintComparison(r, r.tuned, "the best after tuning");
    if (r.within) {
      PrintComparison(
          r, *r.within,
          absl::StrCat("the fastest of the first ", c.within, " trials"));
    }
    // Judged on what the run had found by c.within trials: the final best
    // when the run was no longer, or when nothing faster came later.
    const PeerComparison& judged = r.within ? *r.within : r.tuned;
    const double ratio = judged.peer_s / judged.lathe_s;
    std::printf(
        "target: tuned >= %.1fx %s within %lld trials: %s (%.2fx, %s)\n",
        c.target, c.peer, static_cast<long long>(c.within),
        r.trials < c.within && ratio < c.target
            ? "not met yet (fewer trials than that)"
        : ratio >= c.target ? "met"
                            : "not met",
        ratio,
        r.trials <= c.within
            ? absl::StrCat("after ", r.trials, " trials").c_str()
        : r.within
            ? absl::StrCat("the fastest of the first ", c.within, " trials")
                  .c_str()
            : absl::StrCat("the best after ", r.trials,
                           " trials, found within ", c.within)
                  .c_str());
  }
  std::printf("target: search overhead <= 15%%: %s (%.1f%%)\n",
              overhead <= 0.15 ? "met" : "not met", overhead * 100);
  const bench::AccuracySummary a =
      bench::MeanAccuracy(r.accuracy, r.trained_on, kAccuracyRows);
  const bench::AccuracySummary apart =
      bench::MeanAccuracy(r.accuracy_apart, r.trained_on, kAccuracyRows);
  std::printf(
      "target: pairwise accuracy >= 0.75 after 500 records: %s (%.3f; on the "
      "pairs more "
      "than %.0f%% apart: %.3f)\n",
      a.batches == 0   ? "not judged (no batch after 500 records)"
      : a.mean >= 0.75 ? "met"
                       : "not met",
      a.mean, kOrderableGap * 100, apart.mean);
  std::fflush(stdout);
}

std::string JsonNumber(double v) { return absl::StrFormat("%.6g", v); }

std::string RemeasuredJson(const Result& r) {
  const bench::Agreement& a = r.agreement;
  if (a.batches == 0) return "null";
  return absl::StrCat("{\"batches\": ", a.batches, ", \"trained_on\": [",
                      absl::StrJoin(r.remeasured_trained_on, ", "),
                      "], \"rounds\": ", r.remeasure_rounds,
                      ", \"seconds\": ", JsonNumber(r.remeasure_s),
                      ", \"label_vs_again\": ", JsonNumber(a.label_vs_again),
                      ", \"model_vs_label\": ", JsonNumber(a.model_vs_label),
                      ", \"model_vs_again\": ", JsonNumber(a.model_vs_again),
                      ", \"close_share\": ", JsonNumber(a.close_share), "}");
}

std::string ToJson(const Result& r) {
  const double flops = r.flops;
  std::vector<std::string> points, curve, batches;
  for (const bench::CurvePoint& p : r.checkpoints) {
    points.push_back(absl::StrCat("[", p.trials, ", ", JsonNumber(p.at_s), ", ",
                                  JsonNumber(p.best_gflops), "]"));
  }
  for (const bench::CurvePoint& p : r.curve) {
    curve.push_back(absl::StrCat("[", p.trials, ", ", JsonNumber(p.at_s), ", ",
                                 JsonNumber(p.best_gflops), "]"));
  }
  for (size_t i = 0; i < r.accuracy.size() && i < r.trained_on.size(); ++i) {
    batches.push_back(absl::StrCat("[", r.trained_on[i], ", ",
                                   JsonNumber(r.accuracy[i]), "]"));
  }
  const bench::AccuracySummary a500 =
      bench::MeanAccuracy(r.accuracy, r.trained_on, kAccuracyRows);
  const bench::AccuracySummary all =
      bench::MeanAccuracy(r.accuracy, r.trained_on, 1);
  const bench::AccuracySummary apart500 =
      bench::MeanAccuracy(r.accuracy_apart, r.trained_on, kAccuracyRows);
  auto or_null = [](bool present, double v) {
    return present ? JsonNumber(v) : std::string("null");
  };
  return absl::StrCat(
      "{\"workload\": \"", r.config.spec, "\", \"threads\": ", r.config.threads,
      ", \"target\": \"", r.target_string, "\", \"trials\": ", r.trials,
      ", \"errors\": ", r.errors,
      ", \"interrupted\": ", r.interrupted ? "true" : "false",
      ",\n   \"wall_s\": ", JsonNumber(r.wall_s),
      ", \"measure_s\": ", JsonNumber(r.measure_s),
      ", \"measure_all_s\": ", JsonNumber(r.measure_all_s),
      ", \"build_s\": ", JsonNumber(r.build_s),
      ", \"build_ahead_s\": ", JsonNumber(r.build_ahead_s),
      ", \"build_only_s\": ", JsonNumber(r.build_only_s),
      ", \"build_only_requests\": ", r.build_only_requests,
      ", \"failed_s\": ", JsonNumber(r.failed_s),
      ", \"run_s\": ", JsonNumber(r.run_s),
      ", \"check_s\": ", JsonNumber(r.check_s), ", \"search_overhead\": ",
      JsonNumber(bench::SearchOverhead(r.measure_all_s, r.wall_s)),
      ",\n   \"checkpoints\": [", absl::StrJoin(points, ", "),
      "], \"final_best_gflops\": ",
      or_null(r.final_best_gflops.has_value(), r.final_best_gflops.value_or(0)),
      ", \"remeasured_gflops\": ",
      or_null(r.remeasured_gflops.has_value(), r.remeasured_gflops.value_or(0)),
      ",\n   \"accuracy_trained_500\": ", or_null(a500.batches > 0, a500.mean),
      ", \"accuracy_all\": ", or_null(all.batches > 0, all.mean),
      ", \"accuracy_apart_trained_500\": ",
      or_null(apart500.batches > 0, apart500.mean), ", \"batches\": [",
      absl::StrJoin(batches, ", "), "]",
      ",\n   \"remeasured\": ", RemeasuredJson(r), ",\n   \"peer\": \"",
      r.config.peer, "\", \"peer_impl\": \"", r.tuned.peer_impl,
      "\", \"best_hash\": \"", r.tuned.hash, "\", \"tuned_gflops\": ",
      or_null(r.tuned.lathe_s > 0, flops / r.tuned.lathe_s * 1e-9),
      ", \"peer_gflops\": ",
      or_null(r.tuned.peer_s > 0, flops / r.tuned.peer_s * 1e-9),
      ", \"ratio\": ",
      or_null(r.tuned.lathe_s > 0, r.tuned.peer_s / r.tuned.lathe_s),
      ", \"ratio_second_calls\": ",
      or_null(r.tuned.lathe_warm_s > 0,
              r.tuned.peer_warm_s / r.tuned.lathe_warm_s),
      ", \"load_average\": ", JsonNumber(r.tuned.load_average),
      ",\n   \"within_trials\": ", r.config.within,
      ", \"fastest_within_hash\": \"", r.fastest_within_hash,
      "\", \"ratio_within\": ",
      r.within ? JsonNumber(r.within->peer_s / r.within->lathe_s)
               : or_null(r.tuned.lathe_s > 0 && r.trials >= r.config.within,
                         r.tuned.peer_s / r.tuned.lathe_s),
      ",\n   \"curve\": [", absl::StrJoin(curve, ", "), "]}");
}

absl::StatusOr<Result> RunConfig(const Options& opt, const Config& config) {
  Result result;
  result.config = config;
  LATHE_ASSIGN_OR_RETURN(Workload workload, ParseWorkloadSpec(config.spec));
  const Target target = HostTarget(config.threads);
  result.target_string = target.ToString();
  LATHE_ASSIGN_OR_RETURN(tuner::Task task,
                         tuner::MakeTask(workload, target, /*weight=*/1));
  result.flops = static_cast<double>(task.flops);
  std::printf("\n== %s, %d thread%s, %lld trials (target %s) ==\n",
              config.spec.c_str(), config.threads,
              config.threads == 1 ? "" : "s",
              static_cast<long long>(config.trials), target.ToString().c_str());
  std::fflush(stdout);

  std::optional<TempDatabase> temp;
  std::string db_path = opt.db;
  if (db_path.empty()) {
    LATHE_ASSIGN_OR_RETURN(TempDatabase made, TempDatabase::Make());
    temp.emplace(std::move(made));
    db_path = temp->path();
  }
  db::OpenOptions open;
  open.mode = db::OpenOptions::Mode::kCreate;
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<db::Database> db,
                         db::Database::Open(db_path, open));
  LATHE_ASSIGN_OR_RETURN(std::vector<proto::Record> earlier,
                         db->RecordsOfTask(task.key, target.ToString()));
  if (!earlier.empty()) {
    std::printf(
        "note: %s already holds %zu records of this task: the run continues "
        "from them (the curve is not a tuning from scratch)\n",
        db_path.c_str(), earlier.size());
  }
  LATHE_RETURN_IF_ERROR(TuneConfig(opt, config, task, *db, result));
  LATHE_ASSIGN_OR_RETURN(
      std::optional<db::Match> best,
      db->Best(task.key, TargetInfoOf(task.target, HostDeviceDescription())));
  if (!best) {
    return absl::NotFoundError(
        absl::StrCat(config.spec, ": no successful candidate to compare"));
  }
  LATHE_ASSIGN_OR_RETURN(result.tuned,
                         CompareWithPeer(opt, config, task, best->record));
  // A run of more trials than the target's judges what it had found by then.
  if (result.trials > config.within && !result.fastest_within_hash.empty() &&
      result.fastest_within_hash != result.tuned.hash) {
    LATHE_ASSIGN_OR_RETURN(
        proto::Record record,
        RecordOfProgram(*db, task, result.fastest_within_hash));
    LATHE_ASSIGN_OR_RETURN(result.within,
                           CompareWithPeer(opt, config, task, record));
  }
  Print(result);
  return result;
}

absl::StatusOr<std::vector<int>> ParseThreads(const std::string& text) {
  std::vector<int> threads;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int n = 0;
    if (!absl::SimpleAtoi(part, &n) || n < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--threads: \"", part, "\" is not a thread count"));
    }
    threads.push_back(n);
  }
  return threads;
}

absl::StatusOr<Options> ParseOptions(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      return absl::InvalidArgumentError(absl::StrCat(flag, " needs a value"));
    }
    const std::string value = argv[++i];
    if (flag == "--workload") {
      if (value != "matmul1024" && value != "conv" && value != "all") {
        return absl::InvalidArgumentError(absl::StrCat(
            "--workload: \"", value, "\"; one of matmul1024, conv, all"));
      }
      opt.matmul = value != "conv";
      opt.conv = value != "matmul1024";
    } else if (flag == "--threads") {
      LATHE_ASSIGN_OR_RETURN(opt.threads, ParseThreads(value));
    } else if (flag == "--trials") {
      if (!absl::SimpleAtoi(value, &opt.trials) || opt.trials < 1) {
        return absl::InvalidArgumentError("--trials must be at least 1");
      }
    } else if (flag == "--time-budget") {
      if (!absl::SimpleAtod(value, &opt.time_budget_s) ||
          opt.time_budget_s < 0) {
        return absl::InvalidArgumentError("--time-budget must be >= 0");
      }
    } else if (flag == "--seed") {
      if (!absl::SimpleAtoi(value, &opt.seed)) {
        return absl::InvalidArgumentError("--seed must be a number");
      }
    } else if (flag == "--rounds") {
      if (!absl::SimpleAtoi(value, &opt.rounds) || opt.rounds < 1) {
        return absl::InvalidArgumentError("--rounds must be at least 1");
      }
    } else if (flag == "--min-time") {
      if (!absl::SimpleAtod(value, &opt.min_time_s) || opt.min_time_s <= 0) {
        return absl::InvalidArgumentError("--min-time must be > 0 seconds");
      }
    } else if (flag == "--measure-rounds") {
      if (!absl::SimpleAtoi(value, &opt.measure_rounds) ||
          opt.measure_rounds < 1) {
        return absl::InvalidArgumentError(
            "--measure-rounds must be at least 1");
      }
    } else if (flag == "--remeasure-batches") {
      if (!absl::SimpleAtoi(value, &opt.remeasure_batches) ||
          opt.remeasure_batches < 0) {
        return absl::InvalidArgumentError(
            "--remeasure-batches must be a count >= 0");
      }
    } else if (flag == "--search-while-building") {
      if (value != "0" && value != "1") {
        return absl::InvalidArgumentError(
            "--search-while-building must be 0 or 1");
      }
      opt.search_while_building = value == "1";
    } else if (flag == "--db") {
      opt.db = value;
    } else if (flag == "--json") {
      opt.json = value;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", flag));
    }
  }
  return opt;
}

int Main(int argc, char** argv) {
  absl::StatusOr<Options> parsed = ParseOptions(argc, argv);
  if (!parsed.ok()) {
    std::fprintf(stderr,
                 "bench_tune: %s\nusage: %s [--workload matmul1024|conv|all] "
                 "[--threads 1,2] [--trials N] [--time-budget S] [--seed N] "
                 "[--rounds N] [--min-time S] [--measure-rounds N] "
                 "[--remeasure-batches N] "
                 "[--search-while-building 0|1] [--db PATH] [--json FILE|-]\n",
                 std::string(parsed.status().message()).c_str(), argv[0]);
    return 2;
  }
  const Options& opt = *parsed;
  std::vector<Config> configs;
  if (opt.matmul) {
    for (int t : opt.threads.empty() ? std::vector<int>{1, 2} : opt.threads) {
      configs.push_back({"matmul1024", "matmul:M=1024,N=1024,K=1024", t,
                         opt.trials > 0 ? opt.trials : 500, "openblas", 1.0,
                         500});
    }
  }
  if (opt.conv) {
    for (int t : opt.threads.empty() ? std::vector<int>{1} : opt.threads) {
      configs.push_back({"conv", kConv.Spec(), t,
                         opt.trials > 0 ? opt.trials : 1000, "onednn", 0.8,
                         1000});
    }
  }

  std::printf("machine: %s, %ld cpus, load average %s\n",
              bench::CpuModel().c_str(), sysconf(_SC_NPROCESSORS_ONLN),
              [] {
                double load[3] = {0, 0, 0};
                getloadavg(load, 3);
                return absl::StrFormat("%.2f %.2f %.2f", load[0], load[1],
                                       load[2]);
              }()
                  .c_str());
  bench::PinLatheThreads();
  bench::PrintOpenBlasCore();
  std::printf("oneDNN %s; seed %llu; each configuration tunes from %s\n",
              bench::OneDnnConv::Version().c_str(),
              static_cast<unsigned long long>(opt.seed),
              opt.db.empty() ? "an empty temporary database" : opt.db.c_str());
  std::fflush(stdout);

  std::vector<std::string> json;
  std::vector<Result> results;
  for (const Config& config : configs) {
    absl::StatusOr<Result> result = RunConfig(opt, config);
    if (!result.ok()) {
      std::fprintf(stderr, "bench_tune: %s\n",
                   result.status().ToString().c_str());
      return 1;
    }
    json.push_back(ToJson(*result));
    results.push_back(*std::move(result));
    if (g_stop.load()) break;
  }

  std::printf("\nsummary\n");
  std::printf("  %-12s %3s %7s %8s %13s %13s %6s %9s %9s %9s\n", "workload",
              "thr", "trials", "wall s", "tuned GFLOP/s", "peer GFLOP/s",
              "ratio", "overhead", "acc>=500", ">1% apart");
  auto mean_text = [](const bench::AccuracySummary& a) {
    return a.batches ? absl::StrFormat("%.3f", a.mean) : std::string("n/a");
  };
  for (const Result& r : results) {
    const double flops = r.flops;
    std::printf(
        "  %-12s %3d %7lld %8.1f %13.1f %13.1f %6.2f %8.1f%% %9s %9s\n",
        r.config.name.c_str(), r.config.threads,
        static_cast<long long>(r.trials), r.wall_s,
        flops / r.tuned.lathe_s * 1e-9, flops / r.tuned.peer_s * 1e-9,
        r.tuned.peer_s / r.tuned.lathe_s,
        bench::SearchOverhead(r.measure_all_s, r.wall_s) * 100,
        mean_text(bench::MeanAccuracy(r.accuracy, r.trained_on, kAccuracyRows))
            .c_str(),
        mean_text(
            bench::MeanAccuracy(r.accuracy_apart, r.trained_on, kAccuracyRows))
            .c_str());
  }
  if (!opt.json.empty()) {
    const std::string text = absl::StrCat(
        "{\"configurations\": [\n  ", absl::StrJoin(json, ",\n  "), "\n]}\n");
    if (opt.json == "-") {
      std::fputs(text.c_str(), stdout);
    } else {
      FILE* out = std::fopen(opt.json.c_str(), "w");
      if (out == nullptr) {
        std::fprintf(stderr, "bench_tune: cannot write %s: %s\n",
                     opt.json.c_str(), std::strerror(errno));
        return 1;
      }
      std::fputs(text.c_str(), out);
      std::fclose(out);
    }
  }
  return 0;
}

}  // namespace
}  // namespace lathe

int main(int argc, char** argv) {
  // The measurement worker of the tuner's LocalRunner is this program.
  if (argc > 1 && std::strcmp(argv[1], "runner-worker") == 0) {
    return lathe::runner::RunMeasureWorker(STDIN_FILENO, STDOUT_FILENO);
  }
  lathe::bench::RunOnFairOpenBlasCore(argv);
  return lathe::Main(argc, argv);
}
