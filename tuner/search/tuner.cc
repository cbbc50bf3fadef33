// The tuning loop of tuner.h (Tune): one class, Loop, whose phases (warm
// start from the database, search, measurement in rounds, re-measuring the
// near-ties) share its state, so it stays in one file, past the usual size:
// splitting it would move that private state into a header.
#include "tuner/search/tuner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/target/target_info.h"
#include "compiler/workload/flop_count.h"
#include "compiler/workload/spec.h"
#include "database/record_codec.h"
#include "tuner/cost_model/xgb_cost_model.h"
#include "tuner/features/program_features.h"
#include "tuner/search/concurrent_runs.h"
#include "tuner/search/measurement_record.h"
#include "tuner/search/measurement_rounds.h"
#include "tuner/search/task_scheduler.h"
#include "tuner/search/training_label.h"

namespace lathe::tuner {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Elites kept per task for warm starts and mutation.
constexpr size_t kMaxElites = 64;
// Records of the database turned into training rows, per task.
constexpr size_t kMaxWarmRows = 4000;
// Records of the target's other workloads (those not tuned in this run)
// turned into training rows, in all: the newest, shared fairly among the
// workloads (Database::RecordsOfTarget).
constexpr int64_t kMaxOtherWorkloadRows = 1000;
// Records other runs committed (TuneOptions::concurrent), read per page
// and at most this many pages before a retraining; the rest the next time.
constexpr int64_t kFollowPage = 1000;
constexpr int kMaxFollowPages = 16;
// Searches of a task in a row whose picks other runs had all claimed
// before the task counts as done.
constexpr int kMaxClaimedSearches = 4;

// Everything the loop knows of one task.
struct TaskState {
  // Hashes measured or in flight: structural and lowered (candidate.h), by
  // this run or (TuneOptions::concurrent) another.
  absl::flat_hash_set<std::string> measured;
  int64_t claims_seen = 0;  // ConcurrentRuns::Claimed's cursor
  // Searches in a row that found only programs other runs had claimed.
  int claimed_searches = 0;
  std::vector<Elite> elites;  // fastest first
  TaskProgress progress;
  std::unique_ptr<EvolutionarySearch> search;

  // A candidate dispatched: neither it nor a program lowering to the same
  // code is searched again.
  void MarkMeasured(const Candidate& c) {
    measured.insert(c.structural_hash);
    measured.insert(c.lowered_hash);
  }
  // A candidate dispatched but never measured (stopped): free again.
  void Unmark(const Candidate& c) {
    measured.erase(c.structural_hash);
    measured.erase(c.lowered_hash);
  }
};

// A batch on its way through measurement.
struct Batch {
  int task = -1;
  std::vector<Candidate> candidates;
  std::vector<proto::MeasureResult> results;  // as many as were measured
  int64_t first_trial = 0;
  absl::Status error;  // measuring became impossible
};

// The task of a record's workload, as far as replaying its traces needs
// (no design spaces); an error when the stored workload no longer parses
// or parses to another key (its definition changed since).
absl::StatusOr<Task> TaskOfRecord(const proto::Record& record,
                                  const Target& target) {
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(record.workload());
  if (!workload.ok()) return workload.status();
  if (workload->Key() != record.workload_key()) {
    return absl::FailedPreconditionError(
        absl::StrCat(record.workload(), ": parses to key ", workload->Key(),
                     ", the record says ", record.workload_key()));
  }
  absl::StatusOr<Program> initial = workload->InitialProgram();
  if (!initial.ok()) return initial.status();
  absl::StatusOr<int64_t> flops = FlopCount(*workload);
  if (!flops.ok()) return flops.status();
  return Task{*workload, target, *std::move(initial),  {},
              *flops,    1,      record.workload_key()};
}

// A record's identity among those a run learned from.
std::string RecordKey(const proto::Record& record) {
  return absl::StrCat(record.workload_key(), "/", record.structural_hash());
}

double Throughput(const Task& task, double median_s) {
  return median_s > 0 ? static_cast<double>(task.flops) / median_s * 1e-9 : 0;
}

void AddElite(TaskState& state, Elite elite) {
  auto at = std::upper_bound(state.elites.begin(), state.elites.end(), elite,
                             [](const Elite& a, const Elite& b) {
                               return a.throughput > b.throughput;
                             });
  state.elites.insert(at, std::move(elite));
  if (state.elites.size() > kMaxElites) state.elites.resize(kMaxElites);
}

class Loop {
 public:
  Loop(std::vector<Task>& tasks, db::Database& db, const MeasureFn& measure,
       const TuneOptions& options)
      : tasks_(tasks),
        db_(db),
        measure_(measure),
        options_(options),
        runs_(options.concurrent),
        scheduler_([&] {
          std::vector<double> weights;
          for (const Task& t : tasks) weights.push_back(t.weight);
          return weights;
        }()) {}

  ~Loop() {
    if (!joined_) return;
    for (const Task& task : tasks_) runs_->Leave(task.key, target_);
  }

  absl::StatusOr<TuneReport> Run();

 private:
  absl::Status WarmStart();
  // The training rows of the target's other workloads (WarmStart).
  absl::Status LearnFromOtherWorkloads();
  // A training row of a record of a workload not tuned here, in its
  // workload's group; false when its trace no longer replays to it.
  bool LearnFromOtherWorkload(const proto::Record& record);
  // Concurrent runs (runs_): what the others committed since the last look,
  // learned as this run's own (measured, elites, training rows).
  absl::Status FollowOthers();
  void LearnFromOtherRun(const proto::Record& record);
  // A candidate dispatched but never measured: free for any run again.
  void Free(int task, const Candidate& candidate);
  absl::StatusOr<std::optional<Batch>> SearchNext(int64_t batch_index);
  // What MeasureInRounds measured: results[i] for candidates[i] (empty when
  // stopped before its first round), done_at[i] when its last round ended,
  // and the error that made measuring impossible, if any.
  struct RoundsMeasured {
    std::vector<std::optional<proto::MeasureResult>> results;
    std::vector<double> done_at;
    absl::Status error;
  };
  // Measures `candidates` of `task` in `rounds` rounds (measurement_rounds.h),
  // up to measure_parallelism calls at once, until `stopping` says so.
  // Candidate i is trial first_trial + i (for inject_fault; -1: none), and
  // `on_first_result(i)` runs under progress_mutex_ when its first round ends.
  RoundsMeasured MeasureInRounds(
      const Task& task, const std::vector<Candidate>& candidates,
      const RoundSettings& settings, int rounds, int64_t first_trial,
      const std::function<bool()>& stopping,
      const std::function<void(size_t)>& on_first_result);
  void Measure(Batch& batch);
  // The build-only request of search_while_building: the batch's candidates
  // in the order of its first round. Its result is a hint's: ignored (a
  // candidate that fails to build fails its own request too).
  void BuildAll(const Batch& batch);
  // Adds a measured candidate's result (all its rounds) to the task's
  // progress and the report's history; under progress_mutex_.
  void RecordTrial(const Batch& batch, size_t i,
                   const proto::MeasureResult& result, double at_s);
  absl::Status Process(Batch& batch);
  absl::Status RemeasureNearTies();
  // Commits the records, and the batch's row when given, in one
  // transaction, timed for on_commit; returns the index the row was given
  // (-1 without one).
  absl::StatusOr<int64_t> Commit(const std::vector<proto::Record>& records,
                                 const db::TuningBatch* batch = nullptr);
  proto::Record MakeRecord(const Task& task, const Candidate& candidate,
                           const proto::MeasureResult& result) const;
  proto::MeasureRequest MakeRequest(const Task& task,
                                    const Candidate& candidate,
                                    const RoundSettings& settings,
                                    int64_t trial) const;
  bool Stopping() const {
    if (options_.stop != nullptr && options_.stop->load()) return true;
    return options_.time_budget_s > 0 &&
           Seconds(start_) >= options_.time_budget_s;
  }
  void ReportProgress();

  std::vector<Task>& tasks_;
  db::Database& db_;
  const MeasureFn& measure_;
  const TuneOptions& options_;
  ConcurrentRuns* const runs_;  // null: this run alone on the database
  bool joined_ = false;         // runs_ knows its tasks
  std::string target_;          // tasks_'s, as the database names it
  // Concurrent runs: the last record id read, and the records learned from
  // (RecordKey), this run's own included.
  int64_t followed_through_ = 0;
  absl::flat_hash_set<std::string> learned_;
  absl::flat_hash_map<std::string, int> task_of_key_;
  TaskScheduler scheduler_;
  std::vector<TaskState> states_;
  std::unique_ptr<CostModel> model_;
  TrainingSet training_;
  proto::TargetInfo target_info_;
  Clock::time_point start_ = Clock::now();
  int64_t dispatched_ = 0;  // trials handed to measurement
  std::mutex progress_mutex_;
  TuneReport report_;
  // The target's other workloads met in records: each parsed once and its
  // own group (its throughputs compare only with each other), numbered
  // after the tasks in the order of their first rows.
  struct OtherWorkload {
    absl::StatusOr<Task> task;
    int group = -1;  // none while it has no rows
  };
  absl::flat_hash_map<std::string, std::unique_ptr<OtherWorkload>> others_;
  int next_group_ = 0;
};

absl::Status Loop::WarmStart() {
  const Clock::time_point warm_start = Clock::now();
  model_ = options_.make_model ? options_.make_model()
                               : std::make_unique<XgbCostModel>();
  target_info_ = TargetInfoOf(tasks_.front().target, options_.device);
  states_.resize(tasks_.size());
  next_group_ = static_cast<int>(tasks_.size());
  // Concurrent runs: what is committed from here on is followed; a record
  // read twice (committed while the warm start reads) is learned once.
  if (runs_ != nullptr) {
    absl::StatusOr<int64_t> last = db_.LastRecordId();
    if (!last.ok()) return last.status();
    followed_through_ = *last;
  }
  for (size_t i = 0; i < tasks_.size(); ++i) {
    const Task& task = tasks_[i];
    TaskState& state = states_[i];
    state.progress.workload = task.workload.CanonicalForm();
    state.search = std::make_unique<EvolutionarySearch>(task, options_.search);
    absl::StatusOr<std::vector<proto::Record>> records =
        db_.RecordsOfTask(task.key, task.target.ToString());
    if (!records.ok()) return records.status();
    // The newest records teach the model most about the current design
    // spaces; older ones still count as measured.
    size_t rows = 0;
    for (auto it = records->rbegin(); it != records->rend(); ++it) {
      const proto::Record& record = *it;
      state.measured.insert(record.structural_hash());
      if (runs_ != nullptr) learned_.insert(RecordKey(record));
      // The progress reports the database's measure (the median); the model
      // and the elites learn the fastest repeat (training_label.h).
      const double throughput = TrainingThroughput(task.flops, record);
      if (record.status() == proto::MEASURE_OK &&
          (!state.progress.best_s ||
           record.median_s() < *state.progress.best_s)) {
        state.progress.best_s = record.median_s();
        state.progress.best_gflops = Throughput(task, record.median_s());
      }
      absl::StatusOr<Trace> trace = Trace::FromProto(record.trace());
      if (!trace.ok()) continue;
      if (record.status() == proto::MEASURE_OK)
        AddElite(state, Elite{*trace, throughput});
      if (rows >= kMaxWarmRows) continue;
      absl::StatusOr<Candidate> candidate =
          BuildCandidate(task, -1, *trace, trace->decisions, 0);
      if (!candidate.ok()) continue;  // a trace this build no longer replays
      state.MarkMeasured(*candidate);
      training_.features.push_back(std::move(candidate->features));
      training_.throughputs.push_back(throughput);
      training_.groups.push_back(static_cast<int>(i));
      ++rows;
    }
    report_.warm_rows += static_cast<int64_t>(rows);
  }
  LATHE_RETURN_IF_ERROR(LearnFromOtherWorkloads());
  // A model saved by an earlier run (of these tasks or others) ranks the
  // first batch; every retraining then learns from the rows above too, so
  // what it knew of the other workloads is not lost.
  absl::StatusOr<std::optional<std::string>> saved = db_.GetCostModel(
      target_info_.canonical(), CostModelName(tasks_.front().target));
  if (!saved.ok()) return saved.status();
  report_.loaded_model = *saved && model_->Load(**saved).ok();
  // No saved model (or one of another feature set or format): train on the
  // records.
  if (!report_.loaded_model && !training_.features.empty())
    LATHE_RETURN_IF_ERROR(model_->Train(training_));
  report_.warm_start_s = Seconds(warm_start);
  return absl::OkStatus();
}

absl::Status Loop::LearnFromOtherWorkloads() {
  std::vector<std::string> tuned;
  for (const Task& task : tasks_) tuned.push_back(task.key);
  absl::StatusOr<std::vector<proto::Record>> records = db_.RecordsOfTarget(
      tasks_.front().target.ToString(), kMaxOtherWorkloadRows, tuned);
  if (!records.ok()) return records.status();
  for (const proto::Record& record : *records) {
    if (!LearnFromOtherWorkload(record)) continue;
    ++report_.warm_rows_other;
    if (runs_ != nullptr) learned_.insert(RecordKey(record));
  }
  report_.warm_workloads_other =
      next_group_ - static_cast<int64_t>(tasks_.size());
  return absl::OkStatus();
}

bool Loop::LearnFromOtherWorkload(const proto::Record& record) {
  std::unique_ptr<OtherWorkload>& workload = others_[record.workload_key()];
  if (workload == nullptr) {
    workload = std::make_unique<OtherWorkload>(
        OtherWorkload{TaskOfRecord(record, tasks_.front().target)});
  }
  if (!workload->task.ok()) return false;
  absl::StatusOr<Trace> trace = Trace::FromProto(record.trace());
  if (!trace.ok()) return false;
  absl::StatusOr<Candidate> candidate =
      BuildCandidate(*workload->task, -1, *trace, trace->decisions, 0);
  // A trace this build no longer replays, or replays to another program
  // than the one measured: its features would describe something else.
  if (!candidate.ok() || candidate->structural_hash != record.structural_hash())
    return false;
  if (workload->group < 0) workload->group = next_group_++;
  training_.features.push_back(std::move(candidate->features));
  training_.throughputs.push_back(
      TrainingThroughput(workload->task->flops, record));
  training_.groups.push_back(workload->group);
  return true;
}

absl::Status Loop::FollowOthers() {
  for (int page = 0; page < kMaxFollowPages; ++page) {
    absl::StatusOr<std::vector<proto::Record>> records =
        db_.RecordsOfTargetAfter(target_, followed_through_, kFollowPage);
    if (!records.ok()) return records.status();
    for (const proto::Record& record : *records) {
      followed_through_ = record.id();
      LearnFromOtherRun(record);
    }
    if (static_cast<int64_t>(records->size()) < kFollowPage) break;
  }
  return absl::OkStatus();
}

void Loop::LearnFromOtherRun(const proto::Record& record) {
  // This run's own records, and programs learned before (a near-tie's
  // second measurement), are not learned again.
  if (!learned_.insert(RecordKey(record)).second) return;
  auto tuned = task_of_key_.find(record.workload_key());
  if (tuned == task_of_key_.end()) {
    if (LearnFromOtherWorkload(record)) ++report_.concurrent_rows;
    return;
  }
  const int i = tuned->second;
  const Task& task = tasks_[i];
  TaskState& state = states_[i];
  state.measured.insert(record.structural_hash());
  if (record.status() == proto::MEASURE_OK &&
      (!state.progress.best_s || record.median_s() < *state.progress.best_s)) {
    std::lock_guard<std::mutex> lock(progress_mutex_);
    state.progress.best_s = record.median_s();
    state.progress.best_gflops = Throughput(task, record.median_s());
  }
  absl::StatusOr<Trace> trace = Trace::FromProto(record.trace());
  if (!trace.ok()) return;
  const double throughput = TrainingThroughput(task.flops, record);
  if (record.status() == proto::MEASURE_OK)
    AddElite(state, Elite{*trace, throughput});
  absl::StatusOr<Candidate> candidate =
      BuildCandidate(task, -1, *trace, trace->decisions, 0);
  if (!candidate.ok()) return;
  state.MarkMeasured(*candidate);
  training_.features.push_back(std::move(candidate->features));
  training_.throughputs.push_back(throughput);
  training_.groups.push_back(i);
  ++report_.concurrent_rows;
}

void Loop::Free(int task, const Candidate& candidate) {
  states_[task].Unmark(candidate);
  if (runs_ != nullptr) {
    runs_->Release(tasks_[task].key, target_, this,
                   {candidate.structural_hash, candidate.lowered_hash});
  }
}

absl::StatusOr<std::optional<Batch>> Loop::SearchNext(int64_t batch_index) {
  while (true) {
    if (Stopping() || dispatched_ >= options_.max_trials)
      return std::optional<Batch>();
    std::optional<int> next = scheduler_.Next();
    if (!next) return std::optional<Batch>();
    const int task = *next;
    TaskState& state = states_[task];
    const int size = static_cast<int>(std::min<int64_t>(
        options_.batch_size, options_.max_trials - dispatched_));
    // Concurrent runs: what the others measure is skipped up front, and
    // each pick is claimed; a pick another run claimed first is measured
    // (or being measured) there, as if by this run.
    std::function<bool(const Candidate&)> claim;
    std::vector<Candidate> claimed_elsewhere;
    if (runs_ != nullptr) {
      runs_->Claimed(tasks_[task].key, target_, &state.claims_seen,
                     state.measured);
      claim = [&](const Candidate& c) {
        if (runs_->Claim(tasks_[task].key, target_, this,
                         {c.structural_hash, c.lowered_hash}))
          return true;
        claimed_elsewhere.push_back(c);
        return false;
      };
    }
    absl::StatusOr<std::vector<Candidate>> candidates = state.search->NextBatch(
        size, *model_, state.elites, state.measured,
        StreamSeed(options_.seed, 100 + static_cast<uint64_t>(task),
                   static_cast<uint64_t>(batch_index)),
        /*stats=*/nullptr, [this] { return Stopping(); }, claim);
    if (!candidates.ok()) return candidates.status();
    for (const Candidate& c : claimed_elsewhere) state.MarkMeasured(c);
    if (Stopping()) {
      for (const Candidate& c : *candidates) Free(task, c);
      return std::optional<Batch>();
    }
    if (candidates->empty()) {
      // Everything it found is another run's: search again, past those.
      if (!claimed_elsewhere.empty() &&
          ++state.claimed_searches < kMaxClaimedSearches)
        continue;
      // Nothing unmeasured is left in the task's space.
      scheduler_.MarkDone(task);
      continue;
    }
    state.claimed_searches = 0;
    Batch batch;
    batch.task = task;
    batch.candidates = *std::move(candidates);
    batch.first_trial = dispatched_;
    for (const Candidate& c : batch.candidates) state.MarkMeasured(c);
    dispatched_ += static_cast<int64_t>(batch.candidates.size());
    scheduler_.Dispatch(task, static_cast<int64_t>(batch.candidates.size()));
    return std::optional<Batch>(std::move(batch));
  }
}

proto::MeasureRequest Loop::MakeRequest(const Task& task,
                                        const Candidate& candidate,
                                        const RoundSettings& settings,
                                        int64_t trial) const {
  proto::MeasureRequest request =
      RequestOfRound(task, settings, options_.flush_cache);
  candidate.trace.ToProto(request.mutable_trace());
  if (options_.inject_fault)
    request.set_inject_fault(options_.inject_fault(trial));
  return request;
}

Loop::RoundsMeasured Loop::MeasureInRounds(
    const Task& task, const std::vector<Candidate>& candidates,
    const RoundSettings& settings, int rounds, int64_t first_trial,
    const std::function<bool()>& stopping,
    const std::function<void(size_t)>& on_first_result) {
  const size_t n = candidates.size();
  RoundsMeasured out;
  out.results.resize(n);
  out.done_at.assign(n, 0);
  std::mutex error_mutex;
  auto measure_round = [&](int round, const std::vector<size_t>& order) {
    std::atomic<size_t> next{0};
    auto work = [&] {
      while (true) {
        if (stopping()) return;
        {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!out.error.ok()) return;
        }
        const size_t k = next++;
        if (k >= order.size()) return;
        const size_t i = order[k];
        proto::MeasureRequest request = MakeRequest(
            task, candidates[i], settings,
            first_trial < 0 ? -1 : first_trial + static_cast<int64_t>(i));
        // One measurer gets the whole round in order: it may build the next
        // ones while it times this one.
        if (options_.measure_parallelism <= 1) {
          for (size_t ahead : BuildAheadOf(order, k)) {
            candidates[ahead].trace.ToProto(request.add_build_ahead());
          }
        }
        const auto measure_start = Clock::now();
        absl::StatusOr<proto::MeasureResult> result = measure_(request);
        const double busy = Seconds(measure_start);
        // Abandoned because the run stops (Ctrl-C): not measured, and not
        // an error of the run.
        if (!result.ok() && absl::IsCancelled(result.status()) && stopping())
          return;
        if (!result.ok()) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (out.error.ok()) out.error = result.status();
          return;
        }
        std::lock_guard<std::mutex> lock(progress_mutex_);
        report_.measure_s += busy;
        out.done_at[i] = Seconds(start_);
        if (round == 0) {
          out.results[i] = *std::move(result);
          on_first_result(i);
        } else {
          MergeRound(*result, round, &*out.results[i]);
        }
      }
    };
    const size_t workers = std::min(
        order.size(),
        static_cast<size_t>(std::max(1, options_.measure_parallelism)));
    if (workers <= 1) {
      work();
    } else {
      std::vector<std::thread> threads;
      for (size_t w = 0; w < workers; ++w) threads.emplace_back(work);
      for (std::thread& t : threads) t.join();
    }
  };
  for (int round = 0; round < std::max(1, rounds); ++round) {
    const std::vector<size_t> order =
        CandidatesOfRound(out.results, round, options_.later_rounds_within);
    if (round > 0 && (order.empty() || stopping() || !out.error.ok())) break;
    measure_round(round, order);
  }
  return out;
}

void Loop::Measure(Batch& batch) {
  const size_t n = batch.candidates.size();
  RoundsMeasured measured = MeasureInRounds(
      tasks_[batch.task], batch.candidates,
      SettingsOfRound(options_.min_time_s, options_.min_repeats,
                      options_.max_repeats, options_.measure_rounds),
      options_.measure_rounds, batch.first_trial, [this] { return Stopping(); },
      [&](size_t) {
        // A trial counts when it is first measured (the progress line).
        ++states_[batch.task].progress.trials;
        ++report_.trials;
        if (options_.on_progress) ReportProgress();
      });
  // In trial order, with all the samples its rounds took (stopped between
  // rounds: those of the rounds that ran).
  {
    std::lock_guard<std::mutex> lock(progress_mutex_);
    for (size_t i = 0; i < n; ++i) {
      if (measured.results[i])
        RecordTrial(batch, i, *measured.results[i], measured.done_at[i]);
    }
    if (options_.on_progress) ReportProgress();
  }
  // Measured candidates first, each with its result (Process pairs
  // results[i] with candidates[i] and frees the rest).
  std::vector<Candidate> done, undone;
  for (size_t i = 0; i < n; ++i) {
    if (measured.results[i]) {
      done.push_back(std::move(batch.candidates[i]));
      batch.results.push_back(*std::move(measured.results[i]));
    } else {
      undone.push_back(std::move(batch.candidates[i]));
    }
  }
  for (Candidate& c : undone) done.push_back(std::move(c));
  batch.candidates = std::move(done);
  batch.error = measured.error;
}

void Loop::BuildAll(const Batch& batch) {
  if (batch.candidates.empty() || Stopping()) return;
  const Task& task = tasks_[batch.task];
  proto::MeasureRequest request = MakeRequest(
      task, batch.candidates.front(),
      SettingsOfRound(options_.min_time_s, options_.min_repeats,
                      options_.max_repeats, options_.measure_rounds),
      /*trial=*/-1);
  request.set_build_only(true);
  request.clear_inject_fault();
  for (size_t i = 1; i < batch.candidates.size(); ++i) {
    batch.candidates[i].trace.ToProto(request.add_build_ahead());
  }
  const auto start = Clock::now();
  measure_(request).IgnoreError();
  std::lock_guard<std::mutex> lock(progress_mutex_);
  report_.measure_s += Seconds(start);
  ++report_.build_only_requests;
}

void Loop::RecordTrial(const Batch& batch, size_t i,
                       const proto::MeasureResult& result, double at_s) {
  const Task& task = tasks_[batch.task];
  TaskProgress& progress = states_[batch.task].progress;
  double median = 0;
  if (result.status() == proto::MEASURE_OK) {
    proto::Record summary;
    *summary.mutable_times_s() = result.times_s();
    db::SummarizeTimes(summary);
    median = summary.median_s();
    if (!progress.best_s || median < *progress.best_s) {
      progress.best_s = median;
      progress.best_gflops = Throughput(task, median);
    }
  } else {
    ++progress.errors;
  }
  report_.history.push_back({batch.task, batch.candidates[i].structural_hash,
                             result.status(), median, at_s});
}

void Loop::ReportProgress() {
  TuneProgress progress;
  progress.trials_done = report_.trials;
  progress.trials_total = options_.max_trials;
  progress.elapsed_s = Seconds(start_);
  if (progress.trials_done > 0) {
    double eta =
        progress.elapsed_s / static_cast<double>(progress.trials_done) *
        static_cast<double>(options_.max_trials - progress.trials_done);
    if (options_.time_budget_s > 0)
      eta = std::min(eta, options_.time_budget_s - progress.elapsed_s);
    progress.eta_s = std::max(0.0, eta);
  }
  for (const TaskState& s : states_) progress.tasks.push_back(s.progress);
  if (!report_.judged_batches.empty())
    progress.last_accuracy = report_.judged_batches.back().row.accuracy;
  options_.on_progress(progress);
}

proto::Record Loop::MakeRecord(const Task& task, const Candidate& candidate,
                               const proto::MeasureResult& result) const {
  // A remote runner names itself in its result.
  return MeasurementRecord(
      task.workload, target_info_, candidate.trace, candidate.structural_hash,
      result,
      {result.runner().empty() ? options_.runner_name : result.runner(),
       options_.lathe_version, options_.job});
}

absl::Status Loop::Process(Batch& batch) {
  const Task& task = tasks_[batch.task];
  TaskState& state = states_[batch.task];
  std::vector<proto::Record> records;
  TrainingSet fresh;
  for (size_t i = 0; i < batch.results.size(); ++i) {
    const Candidate& candidate = batch.candidates[i];
    proto::Record record = MakeRecord(task, candidate, batch.results[i]);
    const double throughput = TrainingThroughput(task.flops, record);
    if (record.status() == proto::MEASURE_OK)
      AddElite(state, Elite{candidate.trace, throughput});
    fresh.features.push_back(candidate.features);
    fresh.throughputs.push_back(throughput);
    fresh.groups.push_back(batch.task);
    records.push_back(std::move(record));
  }
  // Candidates not measured (stopped mid-batch) are free to be chosen again.
  for (size_t i = batch.results.size(); i < batch.candidates.size(); ++i) {
    Free(batch.task, batch.candidates[i]);
  }
  if (records.empty()) {
    LATHE_RETURN_IF_ERROR(batch.error);
    scheduler_.Report(batch.task, state.progress.best_s);
    return absl::OkStatus();
  }

  // The model's accuracy on data it has not seen, before it trains on it:
  // the batch's row, with that accuracy, is committed with its records, in
  // one transaction (the report draws it), and numbered there.
  db::TuningBatch judged_row;
  judged_row.job = options_.job;
  judged_row.workload_key = task.key;
  judged_row.target = target_info_.canonical();
  judged_row.trials = static_cast<int64_t>(records.size());
  judged_row.finished_ms = absl::ToUnixMillis(absl::Now());
  // A model that cannot judge fails the run, but not before the batch's
  // measurements are committed (its row then without an accuracy).
  std::optional<std::vector<double>> predicted;
  absl::Status judging;
  if (model_->trained()) {
    absl::StatusOr<std::vector<double>> scores =
        model_->Predict(fresh.features);
    if (scores.ok()) {
      judged_row.accuracy =
          PairwiseAccuracy(*scores, fresh.throughputs, fresh.groups);
      judged_row.trained_on = static_cast<int64_t>(training_.features.size());
      predicted = *std::move(scores);
    } else {
      judging = scores.status();
    }
  }
  absl::StatusOr<int64_t> index = Commit(records, &judged_row);
  if (!index.ok()) return index.status();
  judged_row.index = *index;
  if (runs_ != nullptr) {
    for (const proto::Record& r : records) learned_.insert(RecordKey(r));
  }
  LATHE_RETURN_IF_ERROR(batch.error);
  LATHE_RETURN_IF_ERROR(judging);
  scheduler_.Report(batch.task, state.progress.best_s);

  if (predicted) {
    TuneReport::JudgedBatch judged{
        batch.task, judged_row, {}, *std::move(predicted), fresh.throughputs};
    for (const proto::Record& r : records)
      judged.structural_hashes.push_back(r.structural_hash());
    report_.judged_batches.push_back(std::move(judged));
  }
  for (size_t i = 0; i < fresh.features.size(); ++i) {
    training_.features.push_back(std::move(fresh.features[i]));
    training_.throughputs.push_back(fresh.throughputs[i]);
    training_.groups.push_back(fresh.groups[i]);
  }
  // Concurrent runs: the others' records committed so far join the rows
  // (after this batch's commit, so that the model saved is trained through
  // every record up to followed_through_, this batch's included).
  if (runs_ != nullptr) LATHE_RETURN_IF_ERROR(FollowOthers());
  LATHE_RETURN_IF_ERROR(model_->Train(training_));
  absl::StatusOr<std::string> bytes = model_->Save();
  if (!bytes.ok()) return bytes.status();
  const std::string name = CostModelName(tasks_.front().target);
  auto save = [&] {
    return db_.PutCostModel(target_info_, name, *bytes,
                            static_cast<int64_t>(training_.features.size()));
  };
  // A model trained through later records (another run's, which learned
  // this one's records) is not replaced.
  LATHE_RETURN_IF_ERROR(runs_ != nullptr
                            ? runs_->SaveModel(target_info_.canonical(), name,
                                               followed_through_, save)
                            : save());
  if (options_.on_progress) {
    std::lock_guard<std::mutex> lock(progress_mutex_);
    ReportProgress();
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Loop::Commit(const std::vector<proto::Record>& records,
                                     const db::TuningBatch* batch) {
  const Clock::time_point start = Clock::now();
  absl::StatusOr<db::CommitResult> committed = db_.Commit(records, batch);
  if (!committed.ok()) return committed.status();
  if (options_.on_commit) options_.on_commit(Seconds(start));
  return committed->batch_index.value_or(-1);
}

absl::Status Loop::RemeasureNearTies() {
  for (size_t t = 0; t < tasks_.size(); ++t) {
    if (options_.stop != nullptr && options_.stop->load())
      return absl::OkStatus();
    const Task& task = tasks_[t];
    absl::StatusOr<std::vector<db::Match>> top =
        db_.Top(task.key, target_info_, options_.remeasure_top);
    if (!top.ok()) return top.status();
    if (top->size() < 2) continue;
    const double fastest = top->front().record.median_s();
    std::vector<Candidate> ties;
    for (const db::Match& match : *top) {
      if (match.record.median_s() > fastest * (1 + options_.near_tie)) break;
      absl::StatusOr<Trace> trace = Trace::FromProto(match.record.trace());
      if (!trace.ok()) continue;
      absl::StatusOr<Candidate> candidate =
          BuildCandidate(task, -1, *trace, trace->decisions, 0);
      if (!candidate.ok()) continue;
      ties.push_back(*std::move(candidate));
    }
    if (ties.size() < 2) continue;
    // Longer, in two rounds over the near-ties, so a slow spell of the
    // machine does not favour one of them; not trials, and not stopped by
    // the time budget that ended the search.
    const RoundSettings longer{options_.min_time_s * 2, options_.min_repeats,
                               options_.max_repeats};
    RoundsMeasured measured = MeasureInRounds(
        task, ties, longer, /*rounds=*/2, /*first_trial=*/-1,
        [this] { return options_.stop != nullptr && options_.stop->load(); },
        [](size_t) {});
    if (!measured.error.ok()) return measured.error;
    std::vector<proto::Record> records;
    for (size_t i = 0; i < ties.size(); ++i) {
      if (!measured.results[i]) continue;
      records.push_back(MakeRecord(task, ties[i], *measured.results[i]));
      // Provenance: this measurement is a second look, not a new trial.
      records.back().set_runner(
          absl::StrCat(records.back().runner(), " (re-measure)"));
    }
    if (!records.empty()) LATHE_RETURN_IF_ERROR(Commit(records).status());
    // The task's best is now what the database ranks first.
    absl::StatusOr<std::optional<db::Match>> best =
        db_.Best(task.key, target_info_);
    if (best.ok() && *best) {
      states_[t].progress.best_s = (*best)->record.median_s();
      states_[t].progress.best_gflops =
          Throughput(task, (*best)->record.median_s());
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<TuneReport> Loop::Run() {
  if (tasks_.empty())
    return absl::InvalidArgumentError("nothing to tune: no tasks");
  for (const Task& t : tasks_) {
    if (!(t.target == tasks_.front().target)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tasks of one tuning run share a target: ", t.target.ToString(),
          " vs ", tasks_.front().target.ToString()));
    }
  }
  for (size_t i = 0; i < tasks_.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      // Two tasks of one workload would measure the same programs twice.
      if (tasks_[i].key == tasks_[j].key) {
        return absl::InvalidArgumentError(
            absl::StrCat("tasks ", j, " and ", i, " are the same workload (",
                         tasks_[i].workload.CanonicalForm(),
                         "): give it once, with its weight"));
      }
    }
  }
  if (options_.batch_size < 1)
    return absl::InvalidArgumentError("batch size must be >= 1");
  target_ = tasks_.front().target.ToString();
  for (size_t i = 0; i < tasks_.size(); ++i)
    task_of_key_[tasks_[i].key] = static_cast<int>(i);
  // Joined before the database is read: whatever another run measures
  // from here on is either read now or claimed (concurrent_runs.h).
  if (runs_ != nullptr) {
    for (const Task& task : tasks_) runs_->Join(task.key, target_);
    joined_ = true;
  }
  LATHE_RETURN_IF_ERROR(WarmStart());

  int64_t batch_index = 0;
  absl::StatusOr<std::optional<Batch>> next = SearchNext(batch_index++);
  if (!next.ok()) return next.status();
  while (*next) {
    Batch current = std::move(**next);
    const bool search_first = !options_.overlap &&
                              options_.search_while_building &&
                              options_.measure_parallelism <= 1;
    if (options_.overlap) {
      // Measure `current` while the next batch is searched (with the model
      // as it is now, before `current`'s results: reproducible).
      std::thread measuring([&] { Measure(current); });
      next = SearchNext(batch_index++);
      measuring.join();
    } else if (search_first) {
      // The same, but beside the builds only: the timings wait for the
      // search.
      std::thread building([&] { BuildAll(current); });
      next = SearchNext(batch_index++);
      building.join();
      Measure(current);
    } else {
      Measure(current);
    }
    if (absl::Status processed = Process(current); !processed.ok()) {
      // The next batch, searched meanwhile, is never measured: its claims
      // go back for the other runs.
      if (next.ok() && *next) {
        for (const Candidate& c : (*next)->candidates) Free((*next)->task, c);
      }
      return processed;
    }
    if (!options_.overlap && !search_first) next = SearchNext(batch_index++);
    if (!next.ok()) return next.status();
    if (Stopping() && *next) {
      // Stopped while searching: the batch was never measured.
      for (const Candidate& c : (*next)->candidates) Free((*next)->task, c);
      next = std::optional<Batch>();
    }
  }
  report_.interrupted = options_.stop != nullptr && options_.stop->load();
  if (!report_.interrupted && options_.remeasure_top > 1) {
    LATHE_RETURN_IF_ERROR(RemeasureNearTies());
    // A stop during the re-measuring leaves the near-ties unsettled: the
    // run did not finish (it reported "done" and its job as done). The
    // time budget does not count: it ends the search, not the re-measuring.
    report_.interrupted = options_.stop != nullptr && options_.stop->load();
  }
  for (const TaskState& s : states_) report_.tasks.push_back(s.progress);
  report_.wall_s = Seconds(start_);
  return report_;
}

}  // namespace

std::vector<double> TuneReport::BatchAccuracy() const {
  std::vector<double> accuracy;
  for (const JudgedBatch& judged : judged_batches)
    accuracy.push_back(judged.row.accuracy.value_or(0));
  return accuracy;
}

std::string CostModelName(const Target& target) {
  // The model is only valid for the features and the label it was trained
  // on (a model of medians, before training_label.h, is not reused).
  return absl::StrCat(
      "xgboost:label=fastest:features=",
      absl::StrCat(StableHash64(absl::StrJoin(FeatureNamesFor(target), ","))));
}

absl::StatusOr<TuneReport> Tune(std::vector<Task>& tasks, db::Database& db,
                                const MeasureFn& measure,
                                const TuneOptions& options) {
  Loop loop(tasks, db, measure, options);
  return loop.Run();
}

}  // namespace lathe::tuner
