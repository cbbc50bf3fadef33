#include "bench/tuning_curve.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lathe::bench {
namespace {

using Trial = tuner::TuneReport::Trial;

Trial Ok(int task, double median_s, double at_s) {
  return Trial{task, "h", proto::MEASURE_OK, median_s, at_s};
}
Trial Failed(int task, proto::MeasureStatus status, double at_s) {
  return Trial{task, "h", status, 0, at_s};
}

TEST(FastestWithin, IsTheFastestOkTrialOfTheTaskAmongItsFirstN) {
  std::vector<Trial> history = {
      Trial{0, "a", proto::MEASURE_OK, 2.0, 1},
      Trial{1, "other task", proto::MEASURE_OK, 0.1, 2},
      Trial{0, "wrong", proto::MEASURE_WRONG_RESULT, 0.5, 3},
      Trial{0, "b", proto::MEASURE_OK, 1.0, 4},
      Trial{0, "c", proto::MEASURE_OK, 1.0, 5},  // a tie: the first stays
      Trial{0, "d", proto::MEASURE_OK, 0.2, 6},  // the 5th trial of task 0
  };
  EXPECT_EQ(FastestWithin(history, 0, 1), "a");
  EXPECT_EQ(FastestWithin(history, 0, 2), "a");  // the failed one never counts
  EXPECT_EQ(FastestWithin(history, 0, 4), "b");
  EXPECT_EQ(FastestWithin(history, 0, 5), "d");
  EXPECT_EQ(FastestWithin(history, 0, 100), "d");
  EXPECT_EQ(FastestWithin(history, 1, 1), "other task");
  EXPECT_EQ(FastestWithin(history, 2, 10), "");
  EXPECT_EQ(FastestWithin({Failed(0, proto::MEASURE_RUN_ERROR, 1)}, 0, 1), "");
}

TEST(TuningCurve, KeepsTheBestSoFarPerTrialOfTheTask) {
  // 2e9 flops: a median of 1 s is 2 GFLOP/s.
  std::vector<Trial> history = {Ok(0, 1.0, 1), Ok(0, 2.0, 2), Ok(0, 0.5, 3),
                                Ok(0, 0.8, 4)};
  std::vector<CurvePoint> curve = TuningCurve(history, 0, 2'000'000'000);
  ASSERT_EQ(curve.size(), 4u);
  EXPECT_EQ(curve[0].trials, 1);
  EXPECT_DOUBLE_EQ(curve[0].best_gflops, 2.0);
  EXPECT_DOUBLE_EQ(curve[1].best_gflops, 2.0);  // slower: the best stays
  EXPECT_DOUBLE_EQ(curve[2].best_gflops, 4.0);
  EXPECT_DOUBLE_EQ(curve[3].best_gflops, 4.0);
  EXPECT_EQ(curve[3].trials, 4);
  EXPECT_DOUBLE_EQ(curve[3].at_s, 4);
}

TEST(TuningCurve, FailedTrialsCountAsTrialsButNeverAsTheBest) {
  // A wrong result with a (bogus) tiny median must not become the best.
  std::vector<Trial> history = {
      Failed(0, proto::MEASURE_BUILD_ERROR, 1),
      Trial{0, "h", proto::MEASURE_WRONG_RESULT, 1e-9, 2}, Ok(0, 1.0, 3),
      Trial{0, "h", proto::MEASURE_OK, 0, 4}};
  std::vector<CurvePoint> curve = TuningCurve(history, 0, 1'000'000'000);
  ASSERT_EQ(curve.size(), 4u);
  EXPECT_DOUBLE_EQ(curve[0].best_gflops, 0);
  EXPECT_DOUBLE_EQ(curve[1].best_gflops, 0);
  EXPECT_DOUBLE_EQ(curve[2].best_gflops, 1.0);
  EXPECT_DOUBLE_EQ(curve[3].best_gflops, 1.0);
}

TEST(TuningCurve, SkipsOtherTasksTrialsButKeepsTheirWallTime) {
  std::vector<Trial> history = {Ok(1, 0.1, 1), Ok(0, 1.0, 2), Ok(1, 0.01, 3),
                                Ok(0, 2.0, 4)};
  std::vector<CurvePoint> curve = TuningCurve(history, 0, 1'000'000'000);
  ASSERT_EQ(curve.size(), 2u);
  EXPECT_EQ(curve[1].trials, 2);
  EXPECT_DOUBLE_EQ(curve[1].at_s, 4);
  EXPECT_DOUBLE_EQ(curve[1].best_gflops, 1.0);  // task 1's 100 not taken
}

std::vector<CurvePoint> Linear(int n) {
  std::vector<CurvePoint> curve;
  for (int i = 1; i <= n; ++i) curve.push_back({i, i * 1.5, i * 10.0});
  return curve;
}

TEST(AtCheckpoints, TakesReachedCheckpointsThenTheLastPoint) {
  std::vector<CurvePoint> points =
      AtCheckpoints(Linear(100), {16, 32, 64, 128, 256});
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].trials, 16);
  EXPECT_DOUBLE_EQ(points[0].at_s, 24);
  EXPECT_DOUBLE_EQ(points[0].best_gflops, 160);
  EXPECT_EQ(points[2].trials, 64);
  EXPECT_EQ(points[3].trials, 100);  // the end, not a checkpoint
}

TEST(AtCheckpoints, DoesNotRepeatTheLastPointWhenItIsACheckpoint) {
  std::vector<CurvePoint> points = AtCheckpoints(Linear(32), {16, 32, 64});
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[1].trials, 32);
}

TEST(AtCheckpoints, EmptyCurveGivesNoPoints) {
  EXPECT_TRUE(AtCheckpoints({}, {16, 32}).empty());
}

TEST(SearchOverhead, IsTheShareOfWallTimeOutsideMeasurement) {
  EXPECT_DOUBLE_EQ(SearchOverhead(85, 100), 0.15);
  EXPECT_DOUBLE_EQ(SearchOverhead(100, 100), 0);
  EXPECT_DOUBLE_EQ(SearchOverhead(0, 100), 1);
  // Measuring overlapped with nothing cannot take longer than the run, but
  // clock granularity can make it look so: clamped.
  EXPECT_DOUBLE_EQ(SearchOverhead(100.001, 100), 0);
  EXPECT_DOUBLE_EQ(SearchOverhead(5, 0), 0);
}

TEST(MeanAccuracy, CountsOnlyBatchesTrainedOnEnoughRows) {
  std::vector<double> accuracy = {0.5, 0.6, 0.7, 0.9};
  std::vector<int64_t> trained_on = {32, 480, 500, 532};
  AccuracySummary at_500 = MeanAccuracy(accuracy, trained_on, 500);
  EXPECT_EQ(at_500.batches, 2);  // 500 itself counts
  EXPECT_DOUBLE_EQ(at_500.mean, 0.8);
  AccuracySummary all = MeanAccuracy(accuracy, trained_on, 1);
  EXPECT_EQ(all.batches, 4);
  EXPECT_DOUBLE_EQ(all.mean, 0.675);
  AccuracySummary band = MeanAccuracy(accuracy, trained_on, 32, 500);
  EXPECT_EQ(band.batches, 2);
  EXPECT_DOUBLE_EQ(band.mean, 0.55);
}

TEST(MeanAccuracy, NoBatchGivesZeroBatches) {
  AccuracySummary none = MeanAccuracy({0.9}, {100}, 500);
  EXPECT_EQ(none.batches, 0);
  EXPECT_DOUBLE_EQ(none.mean, 0);
  EXPECT_EQ(MeanAccuracy({}, {}, 0).batches, 0);
}

// Pairs closer than the gap count neither way; the rest as in the strict
// accuracy, batch by batch.
TEST(AccuracyOnPairsApart, LeavesOutPairsWithinTheGap) {
  tuner::TuneReport::JudgedBatch batch;
  // 100 and 99.5 are 0.5% apart and predicted in the wrong order; every
  // other pair is right.
  batch.throughputs = {100, 99.5, 50, 10};
  batch.predicted = {0.8, 0.9, 0.5, 0.1};
  tuner::TuneReport::JudgedBatch all_wrong;
  all_wrong.throughputs = {30, 20, 10};
  all_wrong.predicted = {1, 2, 3};
  std::vector<double> strict = AccuracyOnPairsApart({batch, all_wrong}, 0);
  ASSERT_EQ(strict.size(), 2u);
  EXPECT_DOUBLE_EQ(strict[0], 5.0 / 6);
  EXPECT_DOUBLE_EQ(strict[1], 0);
  std::vector<double> apart = AccuracyOnPairsApart({batch, all_wrong}, 0.01);
  ASSERT_EQ(apart.size(), 2u);
  EXPECT_DOUBLE_EQ(apart[0], 1);
  EXPECT_DOUBLE_EQ(apart[1], 0);
  // 100 against 50 is 50% apart: with a gap of 0.6 only 50/10 and
  // 100/10 and 99.5/10 are left.
  EXPECT_DOUBLE_EQ(AccuracyOnPairsApart({batch}, 0.6)[0], 1);
  EXPECT_TRUE(AccuracyOnPairsApart({}, 0.01).empty());
}

}  // namespace
}  // namespace lathe::bench
