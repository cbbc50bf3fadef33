// Tests of XgbCostModel (tuner/cost_model/xgb_cost_model.cc): it learns a
// ranking it was not told, reproducibly, survives a save/load, and rejects
// bad input with InvalidArgument.
#include "tuner/cost_model/xgb_cost_model.h"

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tuner/cost_model/cost_model.h"

namespace lathe::tuner {
namespace {

constexpr int kFeatures = 150;  // about what tuner/features extracts

// The hidden law of the synthetic tasks: throughput depends on four of the
// features (a monotone one, an optimum, an interaction); a fifth makes the
// program fail; the rest is noise. Each group (task) has its own scale, so
// throughputs of different groups do not compare.
double TrueThroughput(const std::vector<float>& x, int group) {
  if (x[4] > 0.9f) return 0.0;  // e.g. a tile that does not fit
  const double scale = std::pow(10.0, group % 4);
  return scale *
         std::exp(1.5 * x[0] - 4.0 * (x[1] - 0.5) * (x[1] - 0.5) + x[2] * x[3]);
}

// `rows_per_group` programs of each of `groups` tasks, starting at task
// `first_group`, with 5% multiplicative measurement noise.
TrainingSet Synthetic(int groups, int rows_per_group, uint32_t seed,
                      int first_group = 0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(0, 1);
  std::normal_distribution<double> noise(0, 0.05);
  TrainingSet set;
  for (int g = first_group; g < first_group + groups; ++g) {
    for (int r = 0; r < rows_per_group; ++r) {
      std::vector<float> x(kFeatures);
      for (float& v : x) v = uniform(rng);
      set.throughputs.push_back(TrueThroughput(x, g) *
                                std::max(0.0, 1 + noise(rng)));
      set.features.push_back(std::move(x));
      set.groups.push_back(g);
    }
  }
  return set;
}

double Accuracy(const CostModel& model, const TrainingSet& set) {
  absl::StatusOr<std::vector<double>> scores = model.Predict(set.features);
  EXPECT_TRUE(scores.ok()) << scores.status();
  if (!scores.ok()) return 0;
  return PairwiseAccuracy(*scores, set.throughputs, set.groups);
}

// Held out: new programs of the trained tasks and a task never seen.
TrainingSet HeldOut() {
  TrainingSet set = Synthetic(/*groups=*/6, /*rows_per_group=*/40, /*seed=*/99);
  TrainingSet unseen =
      Synthetic(/*groups=*/1, /*rows_per_group=*/40, /*seed=*/7,
                /*first_group=*/6);
  for (size_t i = 0; i < unseen.features.size(); ++i) {
    set.features.push_back(unseen.features[i]);
    set.throughputs.push_back(unseen.throughputs[i]);
    set.groups.push_back(unseen.groups[i]);
  }
  return set;
}

TEST(XgbCostModelUntrained, UntrainedPredictsZerosWhichIsChance) {
  const TrainingSet held_out = HeldOut();
  XgbCostModel model;
  EXPECT_FALSE(model.trained());
  absl::StatusOr<std::vector<double>> scores = model.Predict(held_out.features);
  ASSERT_TRUE(scores.ok()) << scores.status();
  EXPECT_EQ(*scores, std::vector<double>(held_out.features.size(), 0.0));
  EXPECT_EQ(Accuracy(model, held_out), 0.5);
}

TEST(XgbCostModelUntrained, SavingAnUntrainedModelIsAnError) {
  XgbCostModel model;
  EXPECT_EQ(model.Save().status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// Training takes a good part of a second: the suite trains one model that
// its tests share (once per process: ctest runs each test alone), and each
// test trains at most once more.
class XgbCostModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    train_ = new TrainingSet(
        Synthetic(/*groups=*/6, /*rows_per_group=*/80, /*seed=*/1));
    held_out_ = new TrainingSet(HeldOut());
    model_ = new XgbCostModel();
    train_status_ = new absl::Status(model_->Train(*train_));
  }
  static void TearDownTestSuite() {
    delete train_;
    delete held_out_;
    delete model_;
    delete train_status_;
  }
  void SetUp() override { ASSERT_TRUE(train_status_->ok()) << *train_status_; }

  static TrainingSet* train_;
  static TrainingSet* held_out_;
  static XgbCostModel* model_;  // trained on train_ with the default options
  static absl::Status* train_status_;
};
TrainingSet* XgbCostModelTest::train_ = nullptr;
TrainingSet* XgbCostModelTest::held_out_ = nullptr;
XgbCostModel* XgbCostModelTest::model_ = nullptr;
absl::Status* XgbCostModelTest::train_status_ = nullptr;

TEST_F(XgbCostModelTest, LearnsTheRankingOfHeldOutPrograms) {
  EXPECT_TRUE(model_->trained());
  EXPECT_EQ(model_->num_features(), kFeatures);
  const double train_accuracy = Accuracy(*model_, *train_);
  const double held_out_accuracy = Accuracy(*model_, *held_out_);
  RecordProperty("train_accuracy", std::to_string(train_accuracy));
  RecordProperty("held_out_accuracy", std::to_string(held_out_accuracy));
  EXPECT_GT(train_accuracy, 0.9);
  EXPECT_GT(held_out_accuracy, 0.8);
}

TEST_F(XgbCostModelTest, SameDataAndSeedGiveTheSameModel) {
  XgbCostModel again;
  ASSERT_TRUE(again.Train(*train_).ok());
  EXPECT_EQ(*again.Predict(held_out_->features),
            *model_->Predict(held_out_->features));
  EXPECT_EQ(*again.Save(), *model_->Save());
}

TEST_F(XgbCostModelTest, RowsNeedNotBeGroupedByTask) {
  // XGBoost wants each group's rows consecutive; the model must sort them.
  // Interleave the tasks (round robin), keeping the order inside each task:
  // the model must be exactly the one trained on grouped rows.
  TrainingSet interleaved;
  const int groups = 6, rows = 80;
  for (int r = 0; r < rows; ++r) {
    for (int g = 0; g < groups; ++g) {
      const size_t i = static_cast<size_t>(g * rows + r);
      interleaved.features.push_back(train_->features[i]);
      interleaved.throughputs.push_back(train_->throughputs[i]);
      interleaved.groups.push_back(train_->groups[i]);
    }
  }
  XgbCostModel interleaved_model;
  ASSERT_TRUE(interleaved_model.Train(interleaved).ok());
  EXPECT_EQ(*interleaved_model.Predict(held_out_->features),
            *model_->Predict(held_out_->features));
}

TEST_F(XgbCostModelTest, RetrainingReplacesTheModel) {
  // Start from the trained model (loaded), train on the opposite law: the
  // new model must rank the opposite way, not carry on from the first.
  XgbCostModel model;
  ASSERT_TRUE(model.Load(*model_->Save()).ok());
  TrainingSet reversed = *train_;
  for (double& t : reversed.throughputs) t = t > 0 ? 1.0 / t : 0.0;
  ASSERT_TRUE(model.Train(reversed).ok());
  TrainingSet held_out_reversed = *held_out_;
  for (double& t : held_out_reversed.throughputs) t = t > 0 ? 1.0 / t : 0.0;
  EXPECT_GT(Accuracy(model, held_out_reversed), 0.8);
}

TEST_F(XgbCostModelTest, SaveThenLoadPredictsTheSame) {
  absl::StatusOr<std::string> bytes = model_->Save();
  ASSERT_TRUE(bytes.ok()) << bytes.status();

  XgbCostModel loaded;
  absl::Status status = loaded.Load(*bytes);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_TRUE(loaded.trained());
  EXPECT_EQ(loaded.num_features(), kFeatures);
  EXPECT_EQ(*loaded.Predict(held_out_->features),
            *model_->Predict(held_out_->features));
  // And the loaded model saves to the same bytes: nothing is lost on the way.
  EXPECT_EQ(*loaded.Save(), *bytes);
}

TEST_F(XgbCostModelTest, LoadRejectsOtherBytesAndKeepsTheModel) {
  const std::string saved = *model_->Save();
  XgbCostModel model;
  ASSERT_TRUE(model.Load(saved).ok());
  const std::vector<double> before = *model.Predict(held_out_->features);

  std::string flipped = saved;
  flipped[flipped.size() - 10] ^= 0x20;
  const std::string model_bytes = saved.substr(saved.find('\n') + 1);
  for (const std::string& bytes :
       {std::string(), std::string("not a model"), std::string("lathe-xgb 1\n"),
        std::string("lathe-xgb 1\n{garbage"), std::string("lathe-xgb 2\n"),
        std::string("lathe-xgb 2 12\n{garbage}"),
        absl::StrCat("lathe-xgb 2 ", model_bytes.size(), " 1234\n",
                     model_bytes),
        "lathe-xgb 1\n" + model_bytes,  // the previous format, refused
        saved.substr(0, saved.size() / 2), saved.substr(0, saved.size() - 1),
        flipped}) {
    absl::Status status = model.Load(bytes);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument)
        << "bytes of size " << bytes.size() << ": " << status;
  }
  EXPECT_TRUE(model.trained());
  EXPECT_EQ(*model.Predict(held_out_->features), before);

  XgbCostModel untrained;
  EXPECT_FALSE(untrained.Load("nonsense").ok());
  EXPECT_FALSE(untrained.trained());
}

TrainingSet Tiny() {
  return TrainingSet{.features = {{1, 2}, {3, 4}, {5, 6}},
                     .throughputs = {1, 2, 3},
                     .groups = {0, 0, 0}};
}

void ExpectInvalid(const TrainingSet& set, const std::string& message_part) {
  XgbCostModel model;
  absl::Status status = model.Train(set);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find(message_part), std::string::npos) << status;
  EXPECT_FALSE(model.trained());
}

TEST(XgbCostModelInput, RejectsBadTrainingSets) {
  ExpectInvalid(TrainingSet{}, "no rows");

  TrainingSet ragged = Tiny();
  ragged.features[2].push_back(7);
  ExpectInvalid(ragged, "row 2 has 3 features");

  TrainingSet short_throughputs = Tiny();
  short_throughputs.throughputs.pop_back();
  ExpectInvalid(short_throughputs, "2 throughputs");

  TrainingSet short_groups = Tiny();
  short_groups.groups.pop_back();
  ExpectInvalid(short_groups, "2 groups");

  TrainingSet no_features = Tiny();
  for (auto& row : no_features.features) row.clear();
  ExpectInvalid(no_features, "no features");

  TrainingSet negative = Tiny();
  negative.throughputs[1] = -1;
  ExpectInvalid(negative, "throughput of row 1");

  TrainingSet nan_throughput = Tiny();
  nan_throughput.throughputs[0] = std::numeric_limits<double>::quiet_NaN();
  ExpectInvalid(nan_throughput, "throughput of row 0");

  TrainingSet infinite = Tiny();
  infinite.features[1][0] = std::numeric_limits<float>::infinity();
  ExpectInvalid(infinite, "feature 0 of row 1 is infinite");
}

TEST(XgbCostModelInput, FailedTrainingKeepsThePreviousModel) {
  XgbCostModel model;
  ASSERT_TRUE(model.Train(Tiny()).ok());
  const std::vector<double> before = *model.Predict(Tiny().features);
  TrainingSet ragged = Tiny();
  ragged.features[0].pop_back();
  EXPECT_FALSE(model.Train(ragged).ok());
  EXPECT_TRUE(model.trained());
  EXPECT_EQ(*model.Predict(Tiny().features), before);
}

TEST(XgbCostModelObjective, ARegressionObjectiveLearnsTheRankingToo) {
  XgbCostModelOptions options;
  options.objective = "reg:squarederror";
  XgbCostModel model(options);
  ASSERT_TRUE(
      model.Train(Synthetic(/*groups=*/6, /*rows_per_group=*/80, /*seed=*/1))
          .ok());
  EXPECT_GT(Accuracy(model, HeldOut()), 0.8);
}

TEST(XgbCostModelObjective, AnUnknownObjectiveIsAnErrorNamingIt) {
  XgbCostModelOptions options;
  options.objective = "rank:nonsense";
  XgbCostModel model(options);
  absl::Status status = model.Train(Tiny());
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("nonsense"), absl::string_view::npos)
      << status;
  EXPECT_FALSE(model.trained());
}

// The sampling of rows and features draws from the model's seed: another
// seed grows other trees, the same seed the same ones. Without sampling the
// seed changes nothing, so a seed that mattered shows the option reached
// XGBoost.
TEST(XgbCostModelSampling, SampledFeaturesAndRowsFollowTheSeed) {
  const TrainingSet train =
      Synthetic(/*groups=*/3, /*rows_per_group=*/60, /*seed=*/1);
  const TrainingSet held_out = HeldOut();
  auto predict = [&](double subsample, double colsample, uint64_t seed) {
    XgbCostModelOptions options;
    options.subsample = subsample;
    options.colsample_bytree = colsample;
    options.seed = seed;
    XgbCostModel model(options);
    EXPECT_TRUE(model.Train(train).ok());
    return *model.Predict(held_out.features);
  };
  EXPECT_EQ(predict(1, 1, 1), predict(1, 1, 2));
  EXPECT_EQ(predict(1, 0.5, 1), predict(1, 0.5, 1));
  EXPECT_NE(predict(1, 0.5, 1), predict(1, 0.5, 2));
  EXPECT_EQ(predict(0.8, 1, 1), predict(0.8, 1, 1));
  EXPECT_NE(predict(0.8, 1, 1), predict(0.8, 1, 2));
}

TEST(XgbCostModelSampling, ASubsampleOutOfRangeIsAnErrorNamingIt) {
  XgbCostModelOptions options;
  options.subsample = 1.5;
  XgbCostModel model(options);
  absl::Status status = model.Train(Tiny());
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("subsample"), absl::string_view::npos)
      << status;
  EXPECT_FALSE(model.trained());
}

TEST(XgbCostModelInput, NanFeaturesAreMissingValues) {
  TrainingSet set = Tiny();
  set.features[0][1] = std::numeric_limits<float>::quiet_NaN();
  XgbCostModel model;
  absl::Status status = model.Train(set);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_TRUE(model.Predict(set.features).ok());
}

TEST(XgbCostModelInput, TrainsOnASetWithoutPairs) {
  // One program per task, or all failed: nothing to rank, but no error.
  TrainingSet set = Tiny();
  set.groups = {0, 1, 2};
  XgbCostModel model;
  EXPECT_TRUE(model.Train(set).ok());
  set.groups = {0, 0, 0};
  set.throughputs = {0, 0, 0};
  EXPECT_TRUE(model.Train(set).ok());
  EXPECT_TRUE(model.Predict(set.features).ok());
}

TEST(XgbCostModelInput, EmptyPredictionIsEmpty) {
  XgbCostModel model;
  ASSERT_TRUE(model.Train(Tiny()).ok());
  absl::StatusOr<std::vector<double>> scores = model.Predict({});
  ASSERT_TRUE(scores.ok());
  EXPECT_TRUE(scores->empty());
}

TEST(XgbCostModelInput, PredictRejectsRowsOfTheWrongWidth) {
  XgbCostModel model;
  // Untrained: any width, but one width.
  EXPECT_TRUE(model.Predict({{1, 2, 3}}).ok());
  EXPECT_EQ(model.Predict({{1, 2}, {1}}).status().code(),
            absl::StatusCode::kInvalidArgument);

  ASSERT_TRUE(model.Train(Tiny()).ok());
  absl::StatusOr<std::vector<double>> wide = model.Predict({{1, 2, 3}});
  EXPECT_EQ(wide.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wide.status().message().find("trained on 2"), std::string::npos)
      << wide.status();
  EXPECT_EQ(model.Predict({{1, 2}, {1}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(model.Predict({{1, std::numeric_limits<float>::infinity()}})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lathe::tuner
