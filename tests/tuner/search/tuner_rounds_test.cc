// Tests of tuner/search/tuner.h (Tune): measurement in rounds, the next
// candidates named for building ahead, and the near-ties measured again.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "compiler/codegen/cpu_target.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/schedule/replay.h"
#include "compiler/target/target_info.h"
#include "compiler/workload/spec.h"
#include "database/record_codec.h"
#include "tests/support/temp_folder.h"
#include "tests/tuner/search/tuner_fixture.h"
#include "tuner/search/measurement_rounds.h"
#include "tuner/search/tuner.h"

namespace lathe::tuner {
namespace {

using tuner_testing::FakeMeasure;
using tuner_testing::TunerTest;

// Every candidate that measured OK is timed again in a second round over the
// batch, in the opposite order, and its record holds the samples of both.
TEST_F(TunerTest, MeasuresEachBatchInRoundsAndKeepsEverySample) {
  auto db = OpenDb("rounds.db");
  std::vector<Task> tasks = {SmallTask()};
  TuneOptions options = FastOptions();
  options.max_trials = 16;
  options.batch_size = 8;
  options.min_time_s = 0.01;
  options.measure_rounds = 2;
  options.later_rounds_within = 0;   // every program in every round
  std::map<std::string, int> calls;  // per program
  std::vector<std::pair<std::string, int>> sequence;  // (program, its call)
  std::string failing;  // the program that times out in its second round
  MeasureFn measure = [&](const proto::MeasureRequest& request) {
    EXPECT_DOUBLE_EQ(request.min_time_s(), 0.005);
    EXPECT_EQ(request.min_repeats(), 2);  // 2 rounds x 2 >= 3
    absl::StatusOr<proto::MeasureResult> result = FakeMeasure(request);
    const std::string hash = result->structural_hash();
    const int call = ++calls[hash];
    sequence.push_back({hash, call});
    if (call == 2 && failing.empty()) failing = hash;
    if (call == 2 && hash == failing) {
      result->clear_times_s();
      result->set_status(proto::MEASURE_TIMEOUT);
      result->set_error("timed out");
      return result;
    }
    // The second round is the faster: its samples must reach the record.
    if (call == 2) {
      for (double& t : *result->mutable_times_s()) t *= 0.5;
    }
    return result;
  };
  absl::StatusOr<TuneReport> report = Tune(tasks, *db, measure, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->trials, 16);
  ASSERT_EQ(sequence.size(), 32u);
  for (const auto& [hash, n] : calls) EXPECT_EQ(n, 2) << hash;
  // Batch by batch: 8 first calls, then the same 8 programs backwards.
  for (int b = 0; b < 2; ++b) {
    for (int k = 0; k < 8; ++k) {
      EXPECT_EQ(sequence[16 * b + k].second, 1);
      EXPECT_EQ(sequence[16 * b + 8 + k].first, sequence[16 * b + 7 - k].first);
    }
  }
  std::vector<proto::Record> records =
      db->RecordsOfTask(tasks[0].key, HostTarget(1).ToString()).value();
  ASSERT_EQ(records.size(), 16u);
  for (const proto::Record& r : records) {
    if (r.structural_hash() == failing) {
      EXPECT_EQ(r.status(), proto::MEASURE_TIMEOUT);
      EXPECT_EQ(r.error(), "round 2: timed out");
      continue;
    }
    ASSERT_EQ(r.status(), proto::MEASURE_OK);
    ASSERT_EQ(r.times_s_size(), 6);
    EXPECT_DOUBLE_EQ(r.times_s(3), r.times_s(0) * 0.5);
  }
  const std::vector<db::Match> top =
      db->Top(tasks[0].key, TargetInfoOf(tasks[0].target), 100).value();
  EXPECT_EQ(top.size(), 15u);
  for (const db::Match& m : top) EXPECT_NE(m.record.structural_hash(), failing);
}

// Later rounds time again only the programs within later_rounds_within of
// the batch's fastest; the others keep their first round's samples.
TEST_F(TunerTest, LaterRoundsTimeAgainOnlyTheProgramsCloseToTheFastest) {
  auto db = OpenDb("later_rounds.db");
  std::vector<Task> tasks = {SmallTask()};
  TuneOptions options = FastOptions();
  options.max_trials = 16;
  options.batch_size = 8;
  options.measure_rounds = 3;
  std::map<std::string, int> calls;
  std::map<std::string, double> fastest;
  MeasureFn measure = [&](const proto::MeasureRequest& request) {
    absl::StatusOr<proto::MeasureResult> result = FakeMeasure(request);
    ++calls[result->structural_hash()];
    fastest[result->structural_hash()] = result->times_s(0);
    return result;
  };
  absl::StatusOr<TuneReport> report = Tune(tasks, *db, measure, options);
  ASSERT_TRUE(report.ok()) << report.status();
  const std::vector<TuneReport::Trial>& history = report->history;
  ASSERT_EQ(history.size(), 16u);
  int again = 0, once = 0;
  for (size_t b = 0; b < 2; ++b) {
    double batch_fastest = 1e9;
    for (size_t k = 0; k < 8; ++k) {
      batch_fastest =
          std::min(batch_fastest, fastest[history[8 * b + k].structural_hash]);
    }
    for (size_t k = 0; k < 8; ++k) {
      const std::string& hash = history[8 * b + k].structural_hash;
      const bool close = fastest[hash] <= kLaterRoundsWithin * batch_fastest;
      EXPECT_EQ(calls[hash], close ? 3 : 1)
          << "batch " << b << ", program " << k;
      (close ? again : once) += 1;
    }
  }
  // FakeMeasure's times spread over 11x: both kinds occur.
  EXPECT_GT(again, 0);
  EXPECT_GT(once, 0);
}

// With one measurer, each request of a round names the next candidates of
// that round (up to kBuildAheadHints), so that a worker can build them while
// it times this one; with several measurers side by side, none (the next
// candidate may go to another runner).
TEST_F(TunerTest, NamesTheNextCandidatesOfItsRoundForBuildingAhead) {
  for (int parallelism : {1, 3}) {
    auto db = OpenDb(absl::StrCat("ahead_", parallelism, ".db"));
    std::vector<Task> tasks = {SmallTask()};
    TuneOptions options = FastOptions();
    options.max_trials = 16;
    options.batch_size = 8;
    options.measure_rounds = 2;
    options.later_rounds_within = 0;  // every program in every round
    options.measure_parallelism = parallelism;
    std::mutex mutex;
    std::vector<proto::MeasureRequest> requests;
    MeasureFn measure = [&](const proto::MeasureRequest& request) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        requests.push_back(request);
      }
      return FakeMeasure(request);
    };
    absl::StatusOr<TuneReport> report = Tune(tasks, *db, measure, options);
    ASSERT_TRUE(report.ok()) << report.status();
    ASSERT_EQ(requests.size(), 32u);  // 2 batches x 2 rounds x 8
    if (parallelism > 1) {
      for (const proto::MeasureRequest& r : requests)
        EXPECT_EQ(r.build_ahead_size(), 0);
      continue;
    }
    for (size_t round = 0; round < 4; ++round) {  // 8 requests each
      for (size_t k = 0; k < 8; ++k) {
        const proto::MeasureRequest& r = requests[8 * round + k];
        const size_t expected = std::min<size_t>(kBuildAheadHints, 7 - k);
        ASSERT_EQ(static_cast<size_t>(r.build_ahead_size()), expected)
            << round << " " << k;
        for (size_t a = 0; a < expected; ++a) {
          EXPECT_EQ(r.build_ahead(static_cast<int>(a)).SerializeAsString(),
                    requests[8 * round + k + 1 + a].trace().SerializeAsString())
              << "round " << round << ", request " << k << ", hint " << a;
          EXPECT_EQ(r.workload(), requests[8 * round + k + 1 + a].workload());
        }
      }
    }
  }
}

// At the end the near-ties among the best are measured again, longer and in
// two rounds over them: one record each with the samples of both rounds,
// marked as a re-measurement, not a trial.
TEST_F(TunerTest, NearTiesAreMeasuredAgainInTwoLongerRounds) {
  auto db = OpenDb("near_ties.db");
  std::vector<Task> tasks = {SmallTask()};
  TuneOptions options = NearTiesOptions();
  std::vector<double> min_times;
  MeasureFn measure = [&](const proto::MeasureRequest& request) {
    min_times.push_back(request.min_time_s());
    return FakeMeasure(request);
  };
  absl::StatusOr<TuneReport> report = Tune(tasks, *db, measure, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->trials, 8);
  ASSERT_EQ(min_times.size(), 8u + 3 * 2);
  for (size_t k = 8; k < min_times.size(); ++k) {
    EXPECT_DOUBLE_EQ(min_times[k], options.min_time_s * 2);
  }
  const std::vector<proto::Record> records =
      db->RecordsOfTask(tasks[0].key, HostTarget(1).ToString()).value();
  ASSERT_EQ(records.size(), 11u);
  int remeasured = 0;
  for (const proto::Record& r : records) {
    if (r.runner() != "local (re-measure)") continue;
    ++remeasured;
    EXPECT_EQ(r.times_s_size(), 6);  // 3 samples in each of two rounds
  }
  EXPECT_EQ(remeasured, 3);
}

}  // namespace
}  // namespace lathe::tuner
