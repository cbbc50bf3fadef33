// Tests of tuner/search/tuner.h (Tune) and its cost model across tasks: the
// warm start learns from the records of the target's other workloads (of no
// other target, and not those that no longer replay), keeps them in every
// retraining, loads the model an earlier run saved and ranks the first batch
// with it, and a model (its tasks weighted by their calls) reaches a latency
// in fewer trials after a similar model was tuned into the same database.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/schedule/replay.h"
#include "compiler/target/target_info.h"
#include "compiler/workload/spec.h"
#include "tests/tuner/search/tuner_fixture.h"
#include "tuner/cost_model/cost_model.h"
#include "tuner/cost_model/xgb_cost_model.h"
#include "tuner/search/tuner.h"

namespace lathe::tuner {
namespace {

using tuner_testing::FakeMeasure;
using tuner_testing::TunerTest;

// What a RecordingModel was asked, in order.
struct ModelLog {
  std::vector<std::string> events;   // "load:BYTES", "predict", "train"
  std::vector<TrainingSet> trained;  // the data of every Train
};

// A cost model that records its calls. Its scores are a fixed function of
// the features; it counts as trained once loaded or trained.
class RecordingModel : public CostModel {
 public:
  explicit RecordingModel(std::shared_ptr<ModelLog> log)
      : log_(std::move(log)) {}
  absl::Status Train(const TrainingSet& data) override {
    log_->events.push_back("train");
    log_->trained.push_back(data);
    trained_ = true;
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<double>> Predict(
      const std::vector<std::vector<float>>& features) const override {
    log_->events.push_back("predict");
    std::vector<double> scores;
    for (const std::vector<float>& row : features) {
      double score = 0;
      for (size_t i = 0; i < row.size(); ++i)
        if (!std::isnan(row[i])) score += row[i] * static_cast<double>(i % 7);
      scores.push_back(score);
    }
    return scores;
  }
  bool trained() const override { return trained_; }
  absl::StatusOr<std::string> Save() const override { return "recorded"; }
  absl::Status Load(const std::string& bytes) override {
    log_->events.push_back("load:" + bytes);
    trained_ = true;
    return absl::OkStatus();
  }

 private:
  std::shared_ptr<ModelLog> log_;
  bool trained_ = false;
};

std::function<std::unique_ptr<CostModel>()> Recording(
    const std::shared_ptr<ModelLog>& log) {
  return [log] { return std::make_unique<RecordingModel>(log); };
}

int64_t RowsOfGroup(const TrainingSet& data, int group) {
  return std::count(data.groups.begin(), data.groups.end(), group);
}

TEST_F(TunerTest, WarmStartLearnsFromOtherWorkloadsOfTheTargetOnly) {
  auto db = OpenDb("others.db");
  const Target here = HostTarget(1);
  const Target there = HostTarget(2);
  // Another workload tuned on this target, and on another target the same
  // workload and a third one.
  auto tune = [&](const std::string& spec, const Target& target) {
    std::vector<Task> tasks = {
        MakeTask(ParseWorkloadSpec(spec).value(), target, 1).value()};
    absl::StatusOr<TuneReport> report =
        Tune(tasks, *db, FakeMeasure, FastOptions());
    ASSERT_TRUE(report.ok()) << report.status();
  };
  tune("matmul:M=16,N=32,K=16", here);
  tune("matmul:M=16,N=32,K=16", there);
  tune("matmul:M=16,N=16,K=32", there);
  const std::string other_key =
      ParseWorkloadSpec("matmul:M=16,N=32,K=16").value().Key();
  const int64_t other_records = static_cast<int64_t>(
      db->RecordsOfTask(other_key, here.ToString()).value().size());
  ASSERT_EQ(other_records, 24);
  // Records that cannot become rows: one whose trace replays to another
  // program than the one measured, one of a workload that no longer parses.
  {
    proto::Record moved =
        db->RecordsOfTask(other_key, here.ToString()).value().front();
    moved.set_structural_hash("0123456789abcdef0123456789abcdef");
    proto::Record unknown = moved;
    unknown.set_workload_key("00000000feedbeef");
    unknown.set_workload("nosuchop:X=1");
    ASSERT_TRUE(db->Commit({moved, unknown}).ok());
  }

  auto log = std::make_shared<ModelLog>();
  std::vector<Task> tasks = {SmallTask()};
  TuneOptions options = FastOptions();
  options.max_trials = 16;  // two batches of 8
  options.make_model = Recording(log);
  absl::StatusOr<TuneReport> report = Tune(tasks, *db, FakeMeasure, options);
  ASSERT_TRUE(report.ok()) << report.status();
  // Every record of the other workload on this target that replays to the
  // program measured is a row; the other target's are not.
  EXPECT_EQ(report->warm_rows, 0);
  EXPECT_EQ(report->warm_rows_other, other_records);
  EXPECT_EQ(report->warm_workloads_other, 1);
  // The model saved by the earlier runs on this target was loaded, so the
  // warm start did not train; both retrainings after a batch learn from the
  // other workload's rows (one group of its own) beside the task's.
  EXPECT_TRUE(report->loaded_model);
  ASSERT_EQ(log->trained.size(), 2u);
  for (size_t i = 0; i < log->trained.size(); ++i) {
    const TrainingSet& data = log->trained[i];
    const std::set<int> groups(data.groups.begin(), data.groups.end());
    EXPECT_EQ(groups, (std::set<int>{0, 1})) << "training " << i;
    EXPECT_EQ(RowsOfGroup(data, 1), other_records) << "training " << i;
    EXPECT_EQ(RowsOfGroup(data, 0), 8 * static_cast<int64_t>(i + 1))
        << "training " << i;
    EXPECT_EQ(data.features.size(), data.throughputs.size());
  }
}

TEST_F(TunerTest, WarmStartWithoutASavedModelTrainsOnOtherWorkloads) {
  auto db = OpenDb("others_no_model.db");
  // Records of another workload of the target, but no saved model (a
  // database merged from another machine's records, say).
  {
    auto source = OpenDb("source.db");
    std::vector<Task> tasks = {
        MakeTask(ParseWorkloadSpec("matmul:M=16,N=32,K=16").value(),
                 HostTarget(1), 1)
            .value()};
    ASSERT_TRUE(Tune(tasks, *source, FakeMeasure, FastOptions()).ok());
    std::vector<proto::Record> records;
    ASSERT_TRUE(source
                    ->ForEachRecord([&](const proto::Record& r) {
                      records.push_back(r);
                      return absl::OkStatus();
                    })
                    .ok());
    ASSERT_TRUE(db->Commit(records).ok());
  }
  auto log = std::make_shared<ModelLog>();
  std::vector<Task> tasks = {SmallTask()};
  TuneOptions options = FastOptions();
  options.max_trials = 8;
  options.make_model = Recording(log);
  absl::StatusOr<TuneReport> report = Tune(tasks, *db, FakeMeasure, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->loaded_model);
  // Trained at the start on the other workload alone, so the first batch
  // was ranked (predicted before any of this task's measurements) and judged.
  ASSERT_GE(log->events.size(), 2u);
  EXPECT_EQ(log->events[0], "train");
  EXPECT_EQ(log->events[1], "predict");
  ASSERT_FALSE(log->trained.empty());
  EXPECT_EQ(log->trained[0].features.size(), 24u);
  EXPECT_EQ(RowsOfGroup(log->trained[0], 0), 0);
  EXPECT_EQ(report->judged_batches.size(), 1u);
}

TEST_F(TunerTest, ASavedModelIsLoadedAndRanksTheFirstBatch) {
  for (const bool saved : {false, true}) {
    SCOPED_TRACE(saved ? "with a saved model" : "without");
    auto db = OpenDb(saved ? "saved.db" : "unsaved.db");
    if (saved) {
      ASSERT_TRUE(db->PutCostModel(TargetInfoOf(HostTarget(1), ""),
                                   CostModelName(), "earlier job's model", 40)
                      .ok());
    }
    auto log = std::make_shared<ModelLog>();
    std::vector<Task> tasks = {SmallTask()};
    TuneOptions options = FastOptions();
    options.max_trials = 16;
    options.make_model = Recording(log);
    absl::StatusOr<TuneReport> report = Tune(tasks, *db, FakeMeasure, options);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->loaded_model, saved);
    const auto first_train =
        std::find(log->events.begin(), log->events.end(), "train");
    const bool predicted_first =
        std::find(log->events.begin(), first_train, "predict") != first_train;
    if (saved) {
      // Loaded first, then asked to rank candidates before it trained on
      // anything: the first batch is the saved model's choice, and it is
      // judged on it.
      ASSERT_FALSE(log->events.empty());
      EXPECT_EQ(log->events.front(), "load:earlier job's model");
      EXPECT_TRUE(predicted_first);
      EXPECT_EQ(report->judged_batches.size(), 2u);
    } else {
      EXPECT_EQ(std::count(log->events.begin(), log->events.end(),
                           "load:earlier job's model"),
                0);
      EXPECT_FALSE(predicted_first);
      EXPECT_EQ(report->judged_batches.size(), 1u);
    }
  }
}

double Log2(int64_t x) {
  return std::log2(static_cast<double>(std::max<int64_t>(1, x)));
}

// A synthetic measurement whose time is a fixed function of the trace's
// decisions: each perfect-tile decision costs by how far its innermost
// factor is from 8 (in powers of two), each categorical decision by its
// index's distance from 1. The same preference holds for every workload,
// as a real machine's would for similar ones, so a model trained on one
// matmul ranks another's candidates.
absl::StatusOr<proto::MeasureResult> DecisionMeasure(
    const proto::MeasureRequest& request) {
  Workload workload = ParseWorkloadSpec(request.workload()).value();
  Trace trace = Trace::FromProto(request.trace()).value();
  auto scheduled = ReplayTrace(trace, workload.InitialProgram().value());
  proto::MeasureResult result;
  if (!scheduled.ok()) {
    result.set_status(proto::MEASURE_BUILD_ERROR);
    return result;
  }
  double penalty = 0;
  for (const auto& [index, decision] : trace.decisions) {
    const std::string& kind =
        trace.instructions[static_cast<size_t>(index)].kind;
    if (decision.empty()) continue;
    if (kind == "sample_perfect_tile") {
      penalty += std::abs(Log2(decision.back()) - 3);
      if (decision.size() >= 3)
        penalty += 0.5 * std::abs(Log2(decision[decision.size() - 2]) - 1);
    } else if (kind == "sample_categorical") {
      penalty += std::abs(static_cast<double>(decision.front()) - 1);
    }
  }
  result.set_status(proto::MEASURE_OK);
  result.set_structural_hash(StructuralHashHex((*scheduled)->program()));
  const double t = 1e-4 * (1 + penalty);
  for (int i = 0; i < 3; ++i) result.add_times_s(t);
  return result;
}

// Trials until a model of `report`'s tasks, task t called weights[t] times
// a run, would run in at most `target_s`: the weighted sum of each task's
// best median so far (every task measured); `report`'s trials plus one when
// it never did.
int64_t TrialsToReach(const TuneReport& report,
                      const std::vector<double>& weights, double target_s) {
  std::vector<double> best(weights.size(),
                           std::numeric_limits<double>::infinity());
  for (size_t i = 0; i < report.history.size(); ++i) {
    const TuneReport::Trial& trial = report.history[i];
    if (trial.status != proto::MEASURE_OK) continue;
    double& b = best[static_cast<size_t>(trial.task)];
    b = std::min(b, trial.median_s);
    double latency = 0;
    for (size_t t = 0; t < weights.size(); ++t) latency += weights[t] * best[t];
    if (latency <= target_s) return static_cast<int64_t>(i + 1);
  }
  return static_cast<int64_t>(report.history.size()) + 1;
}

int64_t Median(std::vector<int64_t> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// A model is its tasks, each weighted by its calls a run (the task
// scheduler's objective, task_scheduler.h): the second model's tasks are
// not the first's, as a second network's layers differ from the first's.
TEST_F(TunerTest, ASecondModelTunesInFewerTrialsAfterASimilarFirstOne) {
  // A fixed target, not this machine: the design spaces, hence the search,
  // do not depend on where the test runs (nothing is compiled or run).
  const Target target =
      ParseTarget("llvm -mcpu=haswell -mattr=+avx2,+fma -num-threads=1")
          .value();
  auto model_of = [&](const std::vector<std::string>& specs,
                      const std::vector<double>& weights) {
    std::vector<Task> tasks;
    for (size_t t = 0; t < specs.size(); ++t) {
      tasks.push_back(
          MakeTask(ParseWorkloadSpec(specs[t]).value(), target, weights[t])
              .value());
    }
    return tasks;
  };
  TuneOptions options = FastOptions();
  options.max_trials = 64;
  options.batch_size = 8;
  options.search.population = 32;
  options.search.generations = 2;
  options.overlap = false;
  // Fewer trees than the default, for the test's time; the transfer is the
  // same with 500.
  options.make_model = [] {
    XgbCostModelOptions model;
    model.num_rounds = 100;
    return std::make_unique<XgbCostModel>(model);
  };

  // The first model, tuned once: its records and the cost model it saved.
  auto first_db = OpenDb("first.db");
  std::vector<Task> first =
      model_of({"matmul:M=64,N=64,K=64", "matmul:M=128,N=64,K=64"}, {2, 1});
  ASSERT_TRUE(Tune(first, *first_db, DecisionMeasure, options).ok());
  std::vector<proto::Record> records;
  ASSERT_TRUE(first_db
                  ->ForEachRecord([&](const proto::Record& r) {
                    records.push_back(r);
                    return absl::OkStatus();
                  })
                  .ok());
  const std::string model =
      first_db->GetCostModel(target.ToString(), CostModelName())
          .value()
          .value();

  // The second model with several seeds: from an empty database (cold),
  // after the first (its records and its cost model: warm), and with the
  // first model's records alone (a database merged from elsewhere). The
  // search is random, so one seed may be lucky either way; the medians are
  // not. The latency to reach: each call 1e-4 s times 1 + a penalty of 2,
  // 3 calls a run.
  const std::vector<double> weights = {2, 1};
  const double target_s = 3 * 3e-4 + 1e-12;
  std::vector<int64_t> cold, warm, records_only;
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(seed);
    options.seed = seed;
    auto tune_second = [&](const std::string& name, bool with_records,
                           bool with_model) -> std::optional<TuneReport> {
      auto db = OpenDb(name);
      if (with_records) {
        EXPECT_TRUE(db->Commit(records).ok());
      }
      if (with_model) {
        EXPECT_TRUE(db->PutCostModel(TargetInfoOf(target, ""), CostModelName(),
                                     model, 64)
                        .ok());
      }
      std::vector<Task> second =
          model_of({"matmul:M=64,N=96,K=64", "matmul:M=96,N=64,K=64"}, weights);
      absl::StatusOr<TuneReport> report =
          Tune(second, *db, DecisionMeasure, options);
      EXPECT_TRUE(report.ok()) << report.status();
      if (!report.ok()) return std::nullopt;
      EXPECT_EQ(report->loaded_model, with_model);
      EXPECT_EQ(report->warm_rows_other,
                with_records ? static_cast<int64_t>(records.size()) : 0);
      return *std::move(report);
    };
    const std::string suffix = absl::StrCat(seed, ".db");
    std::optional<TuneReport> c = tune_second("cold" + suffix, false, false);
    std::optional<TuneReport> w = tune_second("warm" + suffix, true, true);
    std::optional<TuneReport> r = tune_second("records" + suffix, true, false);
    ASSERT_TRUE(c && w && r);
    cold.push_back(TrialsToReach(*c, weights, target_s));
    warm.push_back(TrialsToReach(*w, weights, target_s));
    records_only.push_back(TrialsToReach(*r, weights, target_s));
  }
  std::printf("trials to %.3g s by seed: cold %s, warm %s, records only %s\n",
              target_s, absl::StrJoin(cold, " ").c_str(),
              absl::StrJoin(warm, " ").c_str(),
              absl::StrJoin(records_only, " ").c_str());
  EXPECT_LT(Median(warm), Median(cold));
  EXPECT_LT(Median(records_only), Median(cold));
}

}  // namespace
}  // namespace lathe::tuner
