// Tuning: the loop of docs/architecture.md's data flow for one or more tasks on
// one target, with results in the database.
//
// Each round the task scheduler picks a task, the evolutionary search picks
// a batch of its candidates never measured (in this run or in the database),
// a measurer builds, checks and times them (in rounds over the batch:
// measurement_rounds.h), the cost model is judged on the batch (its
// pairwise accuracy, on data it has not seen), the batch's records and its
// row of the database's batches (db::TuningBatch, with that accuracy) are
// committed in one transaction, and the model is retrained on every
// measurement so far. With `overlap`, the search of
// the next batch runs while the current one is measured, or, with
// `search_while_building`, only while it is built; the next batch is then
// searched with the model as it was before the current batch's results. A
// seed and the same measurements give the same search in each mode (and the
// same in these two).
//
// Starting from a database that holds records of the tasks continues the
// work: those programs are never measured again, the best of them seed the
// search, and the cost model saved for the target is loaded and ranks the
// first batch. The model learns from every record of the target, not only
// the tasks': the newest records of its other workloads (a bounded number,
// shared fairly among them, each replayed against its own workload; those
// that no longer replay are left out) join the training rows at the start,
// each workload its own group, and stay in every retraining, so what an
// earlier job learned of other workloads is not lost. Stopping (the
// `stop` flag, e.g. from SIGINT, or a budget) ends after the candidate being
// measured, with every measured candidate committed.
//
// At the end, near-ties among each task's best (within `near_tie` of the
// fastest) are measured again; the database ranks a program by its latest
// measurement, so a lucky outlier does not stay the best.
//
// Several runs at once on one database, in one process (the tuning
// service's jobs; TuneOptions::concurrent, concurrent_runs.h): a run claims
// each candidate before it is dispatched and skips those another run
// claimed, so no program is measured by two runs (near-ties measured again
// at the end are second looks, not claimed: two runs of a task may both
// re-measure its best). Before each retraining a run reads the records the
// others committed since it last looked: those of its tasks count as
// measured, become elites and training rows, those of other workloads
// training rows in their groups; its model saved is kept only if no run
// saved one trained through later records. Without `concurrent`, nothing
// of this happens, as for `lathe tune`, the database's only writer.
// Tests: tests/tuner/search/tuner_test.cc.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "database/database.h"
#include "proto/measure.pb.h"
#include "tuner/cost_model/cost_model.h"
#include "tuner/search/concurrent_runs.h"
#include "tuner/search/evolutionary_search.h"
#include "tuner/search/measurement_rounds.h"
#include "tuner/search/task.h"

namespace lathe::tuner {

// Measures one candidate; any fault of the candidate is a result status, an
// error only when measuring is impossible (the runner cannot start).
// Cancelled while `stop` is set: the measurement was abandoned for the stop
// (LocalRunnerOptions::stop), and the candidate counts as not measured.
using MeasureFn = std::function<absl::StatusOr<proto::MeasureResult>(
    const proto::MeasureRequest&)>;

struct TaskProgress {
  std::string workload;
  int64_t trials = 0;            // measured in this run
  int64_t errors = 0;            // of which not OK
  std::optional<double> best_s;  // fastest OK median, this run or the database
  double best_gflops = 0;
};

struct TuneProgress {
  int64_t trials_done = 0;
  int64_t trials_total = 0;  // the trial budget
  double elapsed_s = 0;
  double eta_s =
      0;  // by the trial budget or the time budget, whichever is nearer
  std::vector<TaskProgress> tasks;
  std::optional<double>
      last_accuracy;  // pairwise, on the last batch before training
};

struct TuneOptions {
  int64_t max_trials = 1000;  // over all tasks
  double time_budget_s = 0;   // 0: none
  int batch_size = 32;
  uint64_t seed = 1;
  SearchOptions search;
  bool overlap = true;
  // Without overlap (kernels on every CPU, where a search beside a timing
  // would disturb it): before a batch is measured, one build-only request
  // (MeasureRequest.build_only) has the runner build all of it, on every
  // CPU, and the next batch is searched meanwhile, with the model as
  // `overlap` would use; the timings start once both are done. For one
  // measurer (measure_parallelism 1) that keeps what it builds.
  bool search_while_building = false;
  // Candidates of a batch measured at once (calls of the MeasureFn from
  // that many threads; the tuning service's runners measure side by side).
  // Results are recorded as with 1.
  int measure_parallelism = 1;
  // Measurement settings of every candidate: its samples over all rounds.
  double min_time_s = 0.1;
  int min_repeats = 5;
  int max_repeats = 200;
  bool flush_cache = false;
  // A batch is measured in this many rounds, each timing every candidate
  // for its share of min_time_s (measurement_rounds.h: a slow spell of the
  // machine then does not decide a candidate's label). 1: once each.
  int measure_rounds = 3;
  // Rounds after the first measure only the candidates of the batch within
  // this factor of its fastest (measurement_rounds.h); <= 0: all.
  double later_rounds_within = kLaterRoundsWithin;
  // Near-ties re-measured at the end: up to `remeasure_top` programs within
  // `near_tie` (relative) of each task's fastest.
  double near_tie = 0.05;
  int remeasure_top = 3;
  // Provenance of the records.
  std::string job;
  std::string runner_name = "local";
  std::string lathe_version;
  std::string device;
  // Set (e.g. by a SIGINT handler) to stop after the candidate in flight,
  // or at once where the MeasureFn abandons it (Cancelled).
  const std::atomic<bool>* stop = nullptr;
  // Called after every measured candidate and every batch (from the
  // measuring thread or the caller's; never concurrently).
  std::function<void(const TuneProgress&)> on_progress;
  // Called after each commit of measured records to the database (a
  // batch's, or the near-ties' second measurements) with the seconds it
  // took, from the thread that committed (the daemon's commit latency).
  std::function<void(double seconds)> on_commit;
  // Tests only: the fault to inject into the measurement of the trial with
  // this index ("" for none); see proto/measure.proto.
  std::function<std::string(int64_t trial)> inject_fault;
  // The cost model; default: XGBoost.
  std::function<std::unique_ptr<CostModel>()> make_model;
  // Other runs on the same database in this process (concurrent_runs.h);
  // null: none (the run's claims and saves are its own).
  ConcurrentRuns* concurrent = nullptr;
};

struct TuneReport {
  std::vector<TaskProgress> tasks;
  int64_t trials = 0;
  double wall_s = 0;
  double measure_s =
      0;  // wall time the measurer was busy (builds only included)
  int64_t build_only_requests = 0;  // search_while_building's, one per batch
  // The batches the model was judged on, in order (those measured while it
  // was untrained are left out): each one's row as committed to the
  // database (db::TuningBatch: its index in the job, trials, the model's
  // pairwise accuracy on it before it trained on it, always set here, by
  // the throughputs it learns, training_label.h, and the rows it had
  // trained on), and what it was judged on, so that a benchmark can
  // measure a batch again and see how far the measurement agrees with
  // itself (bench_tune).
  struct JudgedBatch {
    int task = 0;
    db::TuningBatch row;
    std::vector<std::string> structural_hashes;  // in the order measured
    std::vector<double> predicted;               // the model's scores
    std::vector<double> throughputs;             // the labels, GFLOP/s
  };
  std::vector<JudgedBatch> judged_batches;
  // The accuracy of each judged batch, in order (`lathe tune --json`'s
  // batch_accuracy).
  std::vector<double> BatchAccuracy() const;
  bool interrupted = false;
  // The warm start from the database: its seconds; the training rows it
  // made of the records of the tasks tuned, and of other workloads of the
  // target (how many workloads gave rows); whether the model saved for the
  // target was loaded (it then ranked the first batch).
  double warm_start_s = 0;
  int64_t warm_rows = 0;
  int64_t warm_rows_other = 0;
  int64_t warm_workloads_other = 0;
  bool loaded_model = false;
  // Training rows made of records other runs committed while this one ran
  // (TuneOptions::concurrent), of its tasks and other workloads.
  int64_t concurrent_rows = 0;
  // Each measured candidate in order: task, structural hash, status,
  // median (0 when not OK), the seconds since the start when it finished.
  struct Trial {
    int task;
    std::string structural_hash;
    proto::MeasureStatus status;
    double median_s;
    double at_s;
  };
  std::vector<Trial> history;
};

// Name of the cost model saved in the database for the target (its feature
// set: a cuda target's vector is longer); the default is a CPU target's.
std::string CostModelName(const Target& target = Target());

absl::StatusOr<TuneReport> Tune(std::vector<Task>& tasks, db::Database& db,
                                const MeasureFn& measure,
                                const TuneOptions& options);

}  // namespace lathe::tuner
