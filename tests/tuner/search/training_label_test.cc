// Tests of the cost model's training label (tuner/search/training_label.h).
#include "tuner/search/training_label.h"

#include <gtest/gtest.h>

namespace lathe::tuner {
namespace {

proto::Record Measured(std::initializer_list<double> times, double median) {
  proto::Record record;
  record.set_status(proto::MEASURE_OK);
  for (double t : times) record.add_times_s(t);
  record.set_median_s(median);
  return record;
}

// Samples of a program that alternate between its own speed and a core
// shared with another process: the median is the contended one.
TEST(TrainingThroughput, IsTheFastestRepeatNotTheMedian) {
  const proto::Record record =
      Measured({2e-3, 10e-3, 2.5e-3, 10e-3, 10e-3}, 10e-3);
  EXPECT_DOUBLE_EQ(TrainingThroughput(/*flops=*/4'000'000, record), 2.0);
}

TEST(TrainingThroughput, FallsBackToTheMedianWithoutRepeats) {
  EXPECT_DOUBLE_EQ(
      TrainingThroughput(/*flops=*/1'000'000'000, Measured({}, 0.5)), 2.0);
}

TEST(TrainingThroughput, IgnoresRepeatsThatAreNoTimes) {
  EXPECT_DOUBLE_EQ(
      TrainingThroughput(/*flops=*/1'000'000, Measured({0, -1, 1e-3}, 1e-3)),
      1.0);
}

TEST(TrainingThroughput, IsZeroForFailures) {
  proto::Record record = Measured({1e-3}, 1e-3);
  record.set_status(proto::MEASURE_WRONG_RESULT);
  EXPECT_EQ(TrainingThroughput(1'000'000, record), 0);
  record.set_status(proto::MEASURE_TIMEOUT);
  EXPECT_EQ(TrainingThroughput(1'000'000, record), 0);
  EXPECT_EQ(TrainingThroughput(1'000'000, Measured({}, 0)), 0);
}

// A measurement not yet recorded is labelled as its record would be.
TEST(TrainingThroughput, OfAResultIsThatOfItsRecord) {
  proto::MeasureResult result;
  result.set_status(proto::MEASURE_OK);
  for (double t : {3e-3, 2e-3, 4e-3}) result.add_times_s(t);
  EXPECT_DOUBLE_EQ(TrainingThroughput(/*flops=*/4'000'000, result), 2.0);
  result.set_status(proto::MEASURE_WRONG_RESULT);
  EXPECT_DOUBLE_EQ(TrainingThroughput(4'000'000, result), 0);
}

}  // namespace
}  // namespace lathe::tuner
