// Tests of tuner/search/tuner.h (Tune): how a run ends: the stop flag, a
// candidate abandoned for the stop, a stop while the near-ties are measured
// again, and the time budget.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "compiler/codegen/cpu_target.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/schedule/replay.h"
#include "compiler/target/target_info.h"
#include "compiler/workload/spec.h"
#include "runner/local_runner.h"
#include "tests/support/temp_folder.h"
#include "tests/tuner/search/tuner_fixture.h"
#include "tuner/search/tuner.h"

namespace lathe::tuner {
namespace {

using tuner_testing::FakeMeasure;
using tuner_testing::TunerTest;

// Stopping (the flag a SIGINT handler sets) ends after the measurement in
// flight with everything measured committed: mid-batch with one round, and
// between rounds, where the batch keeps the samples of its first round.
TEST_F(TunerTest, StopFlagEndsWithEverythingCommitted) {
  struct Case {
    int rounds;
    int stop_at;  // the measure call that sets the flag
  };
  // With batches of 8: the 13th call is mid-batch 2; with 2 rounds the 8th
  // is the last of batch 1's first round.
  for (const Case& c : {Case{1, 13}, Case{2, 8}}) {
    auto db = OpenDb(absl::StrCat("stop_", c.rounds, ".db"));
    std::vector<Task> tasks = {SmallTask()};
    std::atomic<bool> stop{false};
    TuneOptions options = FastOptions();
    options.max_trials = 1000;
    options.measure_rounds = c.rounds;
    options.stop = &stop;
    int measured = 0;
    MeasureFn measure = [&](const proto::MeasureRequest& request) {
      if (++measured == c.stop_at) stop.store(true);
      return FakeMeasure(request);
    };
    absl::StatusOr<TuneReport> report = Tune(tasks, *db, measure, options);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(report->interrupted);
    EXPECT_EQ(measured, c.stop_at);
    EXPECT_EQ(report->trials, c.stop_at);
    EXPECT_EQ(db->GetStats().value().records, c.stop_at);
    const std::vector<proto::Record> records =
        db->RecordsOfTask(tasks[0].key, HostTarget(1).ToString()).value();
    ASSERT_EQ(records.size(), static_cast<size_t>(c.stop_at));
    for (const proto::Record& r : records) {
      EXPECT_EQ(r.status(), proto::MEASURE_OK);
      EXPECT_EQ(r.times_s_size(), 3);  // one round's samples
    }
  }
}

// A runner that abandons the candidate in flight when the stop comes
// (LocalRunnerOptions::stop) answers Cancelled: the run ends as stopped,
// with everything measured before committed and the abandoned candidate
// nowhere. Cancelled without a stop is an error like any other.
TEST_F(TunerTest, CandidateAbandonedForTheStopIsNotRecorded) {
  auto db = OpenDb("abandoned.db");
  std::vector<Task> tasks = {SmallTask()};
  std::atomic<bool> stop{false};
  TuneOptions options = FastOptions();
  options.max_trials = 1000;
  options.measure_rounds = 1;
  options.stop = &stop;
  int measured = 0;
  MeasureFn measure = [&](const proto::MeasureRequest& request)
      -> absl::StatusOr<proto::MeasureResult> {
    if (++measured == 13) {
      stop.store(true);
      return absl::CancelledError("stopping: abandoned");
    }
    return FakeMeasure(request);
  };
  absl::StatusOr<TuneReport> report = Tune(tasks, *db, measure, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->interrupted);
  EXPECT_EQ(measured, 13);
  EXPECT_EQ(report->trials, 12);
  EXPECT_EQ(db->GetStats().value().records, 12);

  auto other_db = OpenDb("cancelled_without_stop.db");
  std::atomic<bool> never{false};
  options.stop = &never;
  MeasureFn cancels =
      [](const proto::MeasureRequest&) -> absl::StatusOr<proto::MeasureResult> {
    return absl::CancelledError("the runner went away");
  };
  std::vector<Task> other_tasks = {SmallTask()};
  EXPECT_EQ(Tune(other_tasks, *other_db, cancels, options).status().code(),
            absl::StatusCode::kCancelled);
}

// A stop while the near-ties are measured again ends the run as stopped:
// every trial was measured, but the best is not settled.
TEST_F(TunerTest, AStopDuringTheNearTiesReMeasurementIsAnInterruptedRun) {
  auto db = OpenDb("near_ties_stopped.db");
  std::vector<Task> tasks = {SmallTask()};
  TuneOptions options = NearTiesOptions();
  std::atomic<bool> stop{false};
  options.stop = &stop;
  int calls = 0;
  MeasureFn measure = [&](const proto::MeasureRequest& request) {
    if (++calls == 9) stop.store(true);  // the first re-measurement
    return FakeMeasure(request);
  };
  absl::StatusOr<TuneReport> report = Tune(tasks, *db, measure, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->trials, 8);
  EXPECT_TRUE(report->interrupted);
  EXPECT_LT(calls, 8 + 3 * 2);
}

// The time budget ends the search, not the run: the near-ties are measured
// again after it, and the run is not an interrupted one.
TEST_F(TunerTest, ARunEndedByItsTimeBudgetIsNotInterrupted) {
  auto db = OpenDb("near_ties_budget.db");
  std::vector<Task> tasks = {SmallTask()};
  TuneOptions options = NearTiesOptions();
  options.max_trials = 1000;
  // The first batch's 8 measurements would take 1.2 s: the budget ends the
  // search inside it, after a few of them.
  options.time_budget_s = 1.0;
  int calls = 0;
  MeasureFn measure = [&](const proto::MeasureRequest& request) {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    return FakeMeasure(request);
  };
  absl::StatusOr<TuneReport> report = Tune(tasks, *db, measure, options);
  ASSERT_TRUE(report.ok()) << report.status();
  // At least two trials (the search of the first batch took under 0.7 s),
  // so that there are near-ties to measure again.
  ASSERT_GE(report->trials, 2);
  EXPECT_LT(report->trials, 8);
  // Then the (at most 3) near-ties, in two rounds.
  const int64_t ties = std::min<int64_t>(report->trials, 3);
  EXPECT_EQ(calls, report->trials + ties * 2);
  EXPECT_FALSE(report->interrupted);
}

}  // namespace
}  // namespace lathe::tuner
