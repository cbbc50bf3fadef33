#include "tuner/search/tuner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "compiler/codegen/cpu_target.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/replay.h"
#include "compiler/target/target_info.h"
#include "compiler/workload/spec.h"
#include "database/record_codec.h"
#include "runner/local_runner.h"
#include "tests/support/temp_folder.h"
#include "tuner/cost_model/cost_model.h"
#include "tuner/search/measurement_rounds.h"
#include "tuner/search/training_label.h"

namespace lathe::tuner {
namespace {

class TunerTest : public ::testing::Test {
 protected:
  std::unique_ptr<db::Database> OpenDb(const std::string& name) {
    db::OpenOptions options;
    options.mode = db::OpenOptions::Mode::kCreate;
    options.durable = false;
    return db::Database::Open(folder_.File(name), options).value();
  }

  static Task SmallTask(const std::string& spec = "matmul:M=32,N=48,K=16") {
    return MakeTask(ParseWorkloadSpec(spec).value(), HostTarget(1), 1).value();
  }

  static TuneOptions FastOptions() {
    TuneOptions options;
    options.max_trials = 24;
    options.batch_size = 8;
    options.search.population = 24;
    options.search.generations = 2;
    options.min_time_s = 0.005;
    options.min_repeats = 3;
    options.remeasure_top = 0;
    options.lathe_version = "test";
    return options;
  }

  // One batch of 8, measured once, then its 3 fastest measured again.
  static TuneOptions NearTiesOptions() {
    TuneOptions options = FastOptions();
    options.max_trials = 8;
    options.batch_size = 8;
    options.measure_rounds = 1;
    options.remeasure_top = 3;
    options.near_tie = 100;  // the 3 fastest all count as ties
    return options;
  }

  test_support::TempFolder folder_;
};

// A deterministic stand-in for measurement: the time is a function of the
// program (its structural hash, found by replaying the trace).
absl::StatusOr<proto::MeasureResult> FakeMeasure(
    const proto::MeasureRequest& request) {
  Workload workload = ParseWorkloadSpec(request.workload()).value();
  Trace trace = Trace::FromProto(request.trace()).value();
  auto scheduled = ReplayTrace(trace, workload.InitialProgram().value());
  proto::MeasureResult result;
  if (!scheduled.ok()) {
    result.set_status(proto::MEASURE_BUILD_ERROR);
    return result;
  }
  const uint64_t hash = StructuralHash((*scheduled)->program());
  result.set_status(proto::MEASURE_OK);
  result.set_structural_hash(StructuralHashHex((*scheduled)->program()));
  const double t = 1e-4 * (1 + static_cast<double>(hash % 1000) / 100);
  for (int i = 0; i < 3; ++i) result.add_times_s(t);
  return result;
}

std::vector<std::string> Hashes(const TuneReport& report) {
  std::vector<std::string> hashes;
  for (const TuneReport::Trial& t : report.history)
    hashes.push_back(t.structural_hash);
  return hashes;
}

// How the search of the next batch runs beside the measurement of one.
enum class Mode { kAfter, kOverlap, kWhileBuilding };

void SetMode(Mode mode, TuneOptions& options) {
  options.overlap = mode == Mode::kOverlap;
  options.search_while_building = mode == Mode::kWhileBuilding;
}

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
  ASSERT_EQ(report->batch_accuracy.size(), 2u);
  ASSERT_EQ(report->judged_batches.size(), 2u);
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
    EXPECT_DOUBLE_EQ(PairwiseAccuracy(judged.predicted, judged.throughputs,
                                      std::vector<int>(8, 0)),
                     report->batch_accuracy[b]);
    const int64_t first =
        report->batch_accuracy_trained_on[b];  // an empty database
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
}

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
