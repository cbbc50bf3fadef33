// Tests of tuner/search/tuner.h (Tune): determinism, searching while
// building, what is never measured twice, parallel measurement, the
// report, several tasks, faulty candidates and the search beating the
// default schedule (measurement rounds and near ties are in
// tuner_rounds_test.cc, stopping in tuner_stop_test.cc).
#include "tuner/search/tuner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>

#include "compiler/codegen/cpu_target.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/replay.h"
#include "compiler/target/target_info.h"
#include "compiler/workload/spec.h"
#include "database/record_codec.h"
#include "runner/local_runner.h"
#include "tests/support/temp_folder.h"
#include "tests/tuner/search/tuner_fixture.h"
#include "tuner/cost_model/cost_model.h"
#include "tuner/search/measurement_rounds.h"
#include "tuner/search/training_label.h"

namespace lathe::tuner {
namespace {

using tuner_testing::FakeMeasure;
using tuner_testing::Hashes;
using tuner_testing::Mode;
using tuner_testing::SetMode;
using tuner_testing::TunerTest;

TEST_F(TunerTest, SameSeedSameMeasurementsSameSearch) {
  for (Mode mode : {Mode::kAfter, Mode::kOverlap, Mode::kWhileBuilding}) {
    const int m = static_cast<int>(mode);
    std::vector<std::vector<std::string>> runs;
    for (int run = 0; run < 2; ++run) {
      std::vector<Task> tasks = {SmallTask()};
      auto db = OpenDb(absl::StrCat("same_", m, "_", run, ".db"));
      TuneOptions options = FastOptions();
      SetMode(mode, options);
      absl::StatusOr<TuneReport> report =
          Tune(tasks, *db, FakeMeasure, options);
      ASSERT_TRUE(report.ok()) << report.status();
      EXPECT_EQ(report->trials, 24);
      runs.push_back(Hashes(*report));
    }
    EXPECT_EQ(runs[0], runs[1]) << "mode " << m;
    // And another seed searches differently.
    std::vector<Task> tasks = {SmallTask()};
    auto db = OpenDb(absl::StrCat("other_", m, ".db"));
    TuneOptions options = FastOptions();
    SetMode(mode, options);
    options.seed = 99;
    EXPECT_NE(Hashes(Tune(tasks, *db, FakeMeasure, options).value()), runs[0]);
  }
}

// Searching while a batch is built: before each batch's rounds, one
// build-only request names all of it in the order of its first round; the
// search is the one overlap gives (the same model for each batch).
TEST_F(TunerTest, SearchWhileBuildingAsksForEachBatchBuiltBeforeItsRounds) {
  std::vector<std::string> overlapped;
  {
    std::vector<Task> tasks = {SmallTask()};
    auto db = OpenDb("while_building_overlap.db");
    TuneOptions options = FastOptions();
    SetMode(Mode::kOverlap, options);
    overlapped = Hashes(Tune(tasks, *db, FakeMeasure, options).value());
  }
  std::vector<Task> tasks = {SmallTask()};
  auto db = OpenDb("while_building.db");
  TuneOptions options = FastOptions();
  SetMode(Mode::kWhileBuilding, options);
  options.measure_rounds = 2;
  options.later_rounds_within = 0;  // every program in every round
  std::vector<proto::MeasureRequest> requests;
  MeasureFn measure = [&](const proto::MeasureRequest& request) {
    requests.push_back(request);
    if (request.build_only()) {
      proto::MeasureResult built;
      built.set_status(proto::MEASURE_OK);
      return absl::StatusOr<proto::MeasureResult>(built);
    }
    return FakeMeasure(request);
  };
  absl::StatusOr<TuneReport> report = Tune(tasks, *db, measure, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(Hashes(*report), overlapped);
  EXPECT_EQ(report->build_only_requests, 3);
  ASSERT_EQ(requests.size(),
            3u * (1 + 2 * 8));  // 3 batches: build, 2 rounds of 8
  for (size_t batch = 0; batch < 3; ++batch) {
    const proto::MeasureRequest& build = requests[17 * batch];
    ASSERT_TRUE(build.build_only()) << "batch " << batch;
    EXPECT_TRUE(build.inject_fault().empty());
    ASSERT_EQ(build.build_ahead_size(), 7);
    for (size_t k = 0; k < 8; ++k) {
      const proto::MeasureRequest& first_round = requests[17 * batch + 1 + k];
      EXPECT_FALSE(first_round.build_only());
      EXPECT_EQ(
          (k == 0 ? build.trace() : build.build_ahead(static_cast<int>(k - 1)))
              .SerializeAsString(),
          first_round.trace().SerializeAsString())
          << "batch " << batch << ", candidate " << k;
    }
  }
  // With measurers side by side nothing is kept between requests: none.
  requests.clear();
  auto parallel_db = OpenDb("while_building_parallel.db");
  std::vector<Task> parallel_tasks = {SmallTask()};
  options.measure_parallelism = 2;
  std::mutex mutex;
  MeasureFn locked = [&](const proto::MeasureRequest& request) {
    std::lock_guard<std::mutex> lock(mutex);
    return measure(request);
  };
  ASSERT_TRUE(Tune(parallel_tasks, *parallel_db, locked, options).ok());
  for (const proto::MeasureRequest& r : requests) EXPECT_FALSE(r.build_only());
}

// Two tasks of one workload (spelled two ways) would measure the same
// programs twice over: refused, naming both.
TEST_F(TunerTest, TwoTasksOfOneWorkloadAreRefused) {
  std::vector<Task> tasks = {SmallTask("matmul:M=32,N=48,K=16"),
                             SmallTask("matmul:K=16,N=48,M=32,dtype=float32")};
  auto db = OpenDb("twice.db");
  absl::StatusOr<TuneReport> report =
      Tune(tasks, *db, FakeMeasure, FastOptions());
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(
      report.status().message().find("tasks 0 and 1 are the same workload"),
      std::string::npos)
      << report.status();
}

TEST_F(TunerTest, NeverMeasuresAProgramTwiceAcrossRuns) {
  auto db = OpenDb("twice.db");
  std::set<std::string> seen;
  for (int run = 0; run < 2; ++run) {
    std::vector<Task> tasks = {SmallTask()};
    TuneOptions options = FastOptions();
    options.seed = 7;  // the same seed: only the database keeps them apart
    absl::StatusOr<TuneReport> report = Tune(tasks, *db, FakeMeasure, options);
    ASSERT_TRUE(report.ok()) << report.status();
    for (const std::string& hash : Hashes(*report)) {
      EXPECT_TRUE(seen.insert(hash).second) << "measured twice: " << hash;
    }
  }
  EXPECT_EQ(seen.size(), 48u);
  // Every trial is a record, and the cost model was saved for the target.
  EXPECT_EQ(db->GetStats().value().records, 48);
  EXPECT_TRUE(db->GetCostModel(HostTarget(1).ToString(), CostModelName())
                  .value()
                  .has_value());
}

// The code that runs: two schedules that differ only where lowering makes
// them equal (a unit split factor outer or inner) are one program to measure.
std::string LoweredHash(const proto::MeasureRequest& request) {
  Workload workload = ParseWorkloadSpec(request.workload()).value();
  Trace trace = Trace::FromProto(request.trace()).value();
  auto scheduled = ReplayTrace(trace, workload.InitialProgram().value());
  if (!scheduled.ok()) return "";
  absl::StatusOr<Program> lowered = LowerProgram((*scheduled)->program());
  return lowered.ok() ? StructuralHashHex(*lowered) : "";
}

TEST_F(TunerTest, NeverMeasuresTwoSchedulesThatLowerToTheSameCode) {
  auto db = OpenDb("lowered.db");
  std::vector<std::string> lowered;
  MeasureFn measure = [&](const proto::MeasureRequest& request) {
    lowered.push_back(LoweredHash(request));
    return FakeMeasure(request);
  };
  // Two runs of the same seed: the second knows the first's programs only
  // from the database.
  for (int run = 0; run < 2; ++run) {
    std::vector<Task> tasks = {SmallTask()};
    TuneOptions options = FastOptions();
    options.seed = 7;
    options.measure_rounds = 1;  // one call per program measured
    ASSERT_TRUE(Tune(tasks, *db, measure, options).ok());
  }
  ASSERT_EQ(lowered.size(), 48u);
  std::set<std::string> distinct(lowered.begin(), lowered.end());
  EXPECT_EQ(distinct.size(), lowered.size());
  EXPECT_EQ(distinct.count(""), 0u);
}

// Measuring a batch's candidates side by side (the tuning service's
// runners) records each measured candidate once, with the runner it names,
// and searches as measuring one at a time does.
TEST_F(TunerTest, ParallelMeasurementRecordsEveryTrialOnce) {
  std::vector<std::vector<std::string>> runs;
  for (int parallelism : {1, 4}) {
    std::vector<Task> tasks = {SmallTask()};
    auto db = OpenDb(absl::StrCat("parallel_", parallelism, ".db"));
    TuneOptions options = FastOptions();
    options.measure_parallelism = parallelism;
    std::atomic<int> in_flight{0}, most_in_flight{0};
    MeasureFn measure = [&](const proto::MeasureRequest& request) {
      const int now = ++in_flight;
      int seen = most_in_flight.load();
      while (now > seen && !most_in_flight.compare_exchange_weak(seen, now)) {
      }
      usleep(2000);
      absl::StatusOr<proto::MeasureResult> result = FakeMeasure(request);
      if (result.ok()) result->set_runner("remote-test");
      --in_flight;
      return result;
    };
    absl::StatusOr<TuneReport> report = Tune(tasks, *db, measure, options);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->trials, 24);
    if (parallelism > 1) {
      EXPECT_GT(most_in_flight.load(), 1);
    }
    std::vector<proto::Record> records =
        db->RecordsOfTask(tasks[0].key, HostTarget(1).ToString()).value();
    ASSERT_EQ(records.size(), 24u);
    std::set<std::string> hashes;
    for (const proto::Record& r : records) {
      hashes.insert(r.structural_hash());
      EXPECT_EQ(r.runner(), "remote-test");
    }
    EXPECT_EQ(hashes.size(), 24u);
    std::vector<std::string> sorted = Hashes(*report);
    std::sort(sorted.begin(), sorted.end());
    runs.push_back(sorted);
  }
  EXPECT_EQ(runs[0], runs[1]);
}

// The report keeps each batch the model was judged on: its programs in the
// order measured, the labels it was judged by (those of the records) and the
// scores that gave its accuracy.
TEST_F(TunerTest, ReportsTheBatchesTheModelWasJudgedOn) {
  auto db = OpenDb("judged.db");
  std::vector<Task> tasks = {SmallTask()};
  absl::StatusOr<TuneReport> report =
      Tune(tasks, *db, FakeMeasure, FastOptions());
  ASSERT_TRUE(report.ok()) << report.status();
  // 3 batches of 8; the first is measured before the model has trained.
  ASSERT_EQ(report->judged_batches.size(), 2u);
  ASSERT_EQ(report->BatchAccuracy().size(), 2u);
  std::map<std::string, proto::Record> by_hash;
  const std::vector<proto::Record> records =
      db->RecordsOfTask(tasks[0].key, HostTarget(1).ToString()).value();
  for (const proto::Record& r : records) by_hash[r.structural_hash()] = r;
  for (size_t b = 0; b < 2; ++b) {
    const TuneReport::JudgedBatch& judged = report->judged_batches[b];
    EXPECT_EQ(judged.task, 0);
    ASSERT_EQ(judged.structural_hashes.size(), 8u);
    ASSERT_EQ(judged.predicted.size(), 8u);
    ASSERT_EQ(judged.throughputs.size(), 8u);
    ASSERT_TRUE(judged.row.accuracy.has_value());
    EXPECT_DOUBLE_EQ(PairwiseAccuracy(judged.predicted, judged.throughputs,
                                      std::vector<int>(8, 0)),
                     *judged.row.accuracy);
    EXPECT_DOUBLE_EQ(report->BatchAccuracy()[b], *judged.row.accuracy);
    const int64_t first = judged.row.trained_on;  // an empty database
    for (size_t i = 0; i < 8; ++i) {
      EXPECT_EQ(
          judged.structural_hashes[i],
          report->history[static_cast<size_t>(first) + i].structural_hash);
      ASSERT_EQ(by_hash.count(judged.structural_hashes[i]), 1u);
      EXPECT_DOUBLE_EQ(
          judged.throughputs[i],
          TrainingThroughput(tasks[0].flops,
                             by_hash[judged.structural_hashes[i]]));
    }
  }
  // Every batch is a row of the database's batches, in order, the first
  // without an accuracy (untrained), the others the report's rows.
  const std::vector<db::TuningBatch> batches =
      db->Batches(tasks[0].key, HostTarget(1).ToString()).value();
  ASSERT_EQ(batches.size(), 3u);
  for (size_t b = 0; b < 3; ++b) {
    EXPECT_EQ(batches[b].index, static_cast<int64_t>(b));
    EXPECT_EQ(batches[b].trials, 8);
    EXPECT_EQ(batches[b].job, FastOptions().job);
  }
  EXPECT_FALSE(batches[0].accuracy.has_value());
  for (size_t b = 1; b < 3; ++b) {
    const db::TuningBatch& row = report->judged_batches[b - 1].row;
    ASSERT_TRUE(batches[b].accuracy.has_value());
    EXPECT_EQ(*batches[b].accuracy, *row.accuracy);
    EXPECT_EQ(batches[b].trained_on, row.trained_on);
    EXPECT_EQ(batches[b].index, row.index);
    EXPECT_EQ(batches[b].finished_ms, row.finished_ms);
  }
}

TEST_F(TunerTest, SeveralTasksAllGetTrials) {
  auto db = OpenDb("tasks.db");
  std::vector<Task> tasks = {SmallTask("matmul:M=32,N=48,K=16"),
                             SmallTask("matmul:M=16,N=16,K=64")};
  TuneOptions options = FastOptions();
  options.max_trials = 40;
  absl::StatusOr<TuneReport> report = Tune(tasks, *db, FakeMeasure, options);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->tasks.size(), 2u);
  EXPECT_GT(report->tasks[0].trials, 0);
  EXPECT_GT(report->tasks[1].trials, 0);
  EXPECT_EQ(report->tasks[0].trials + report->tasks[1].trials, 40);
  EXPECT_EQ(db->GetStats().value().tasks, 2);
}

// The real local runner: faults of candidates are recorded, never fatal.
TEST_F(TunerTest, CrashingHangingAndWrongCandidatesAreRecordedAndTuningGoesOn) {
  runner::LocalRunnerOptions runner_options;
  runner_options.worker_argv = {LATHE_RUNNER_WORKER};
  runner_options.timeout_s = 3;
  auto runner = runner::LocalRunner::Start(runner_options).value();
  MeasureFn measure = [&](const proto::MeasureRequest& r) {
    return runner->Measure(r);
  };
  auto db = OpenDb("faults.db");
  std::vector<Task> tasks = {SmallTask()};
  TuneOptions options = FastOptions();
  options.max_trials = 12;
  options.batch_size = 6;
  options.inject_fault = [](int64_t trial) -> std::string {
    if (trial == 1) return "crash";
    if (trial == 4) return "hang";
    if (trial == 7) return "wrong_result";
    return "";
  };
  absl::StatusOr<TuneReport> report = Tune(tasks, *db, measure, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->trials, 12);
  ASSERT_EQ(report->history.size(), 12u);
  EXPECT_EQ(report->history[1].status, proto::MEASURE_RUN_ERROR);
  EXPECT_EQ(report->history[4].status, proto::MEASURE_TIMEOUT);
  EXPECT_EQ(report->history[7].status, proto::MEASURE_WRONG_RESULT);
  int ok = 0;
  for (const TuneReport::Trial& t : report->history)
    ok += t.status == proto::MEASURE_OK;
  EXPECT_EQ(ok, 9);
  const db::Stats stats = db->GetStats().value();
  EXPECT_EQ(stats.records, 12);
  EXPECT_EQ(stats.records_by_status[proto::MEASURE_RUN_ERROR], 1);
  EXPECT_EQ(stats.records_by_status[proto::MEASURE_TIMEOUT], 1);
  EXPECT_EQ(stats.records_by_status[proto::MEASURE_WRONG_RESULT], 1);
  // The wrong one is never the best, whatever its speed.
  const std::string wrong = report->history[7].structural_hash;
  const std::vector<db::Match> top =
      db->Top(tasks[0].key, TargetInfoOf(tasks[0].target), 100).value();
  EXPECT_EQ(top.size(), 9u);
  for (const db::Match& m : top) {
    EXPECT_NE(m.record.structural_hash(), wrong);
    EXPECT_EQ(m.record.status(), proto::MEASURE_OK);
  }
}

// The search on a small workload beats the default schedule by 2x: a dense
// layer with bias and relu, whose default schedule leaves the epilogue as
// separate passes (measured 5x apart when this test was written).
TEST_F(TunerTest, FindsAScheduleTwiceAsFastAsTheDefault) {
  runner::LocalRunnerOptions runner_options;
  runner_options.worker_argv = {LATHE_RUNNER_WORKER};
  auto runner = runner::LocalRunner::Start(runner_options).value();
  MeasureFn measure = [&](const proto::MeasureRequest& r) {
    return runner->Measure(r);
  };
  Task task = SmallTask("dense:M=64,N=128,K=256,bias=1,relu=1");

  proto::MeasureRequest baseline;
  baseline.set_workload(task.workload.CanonicalForm());
  baseline.set_target(
      task.target.ToString());  // no trace: the default schedule
  baseline.set_min_time_s(0.05);
  baseline.set_min_repeats(10);
  baseline.set_max_repeats(1000);
  baseline.set_check_seed(1);
  proto::MeasureResult result = measure(baseline).value();
  ASSERT_EQ(result.status(), proto::MEASURE_OK) << result.error();
  proto::Record summary;
  *summary.mutable_times_s() = result.times_s();
  db::SummarizeTimes(summary);
  const double default_s = summary.median_s();

  auto db = OpenDb("beats_default.db");
  std::vector<Task> tasks = {task};
  TuneOptions options = FastOptions();
  options.max_trials = 32;
  options.min_time_s = 0.02;
  options.remeasure_top = 3;  // the winner is confirmed by a re-measurement
  absl::StatusOr<TuneReport> report = Tune(tasks, *db, measure, options);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_TRUE(report->tasks[0].best_s.has_value());
  EXPECT_LE(*report->tasks[0].best_s * 2, default_s)
      << "best " << *report->tasks[0].best_s << " s, default " << default_s
      << " s";
}

}  // namespace
}  // namespace lathe::tuner
