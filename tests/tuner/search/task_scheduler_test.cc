#include "tuner/search/task_scheduler.h"

#include <gtest/gtest.h>

namespace lathe::tuner {
namespace {

TEST(TaskScheduler, EveryTaskGetsAFirstBatch) {
  TaskScheduler scheduler({1, 1, 1});
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(scheduler.Next(), i);
    scheduler.Dispatch(i, 32);
  }
}

TEST(TaskScheduler, FavoursTheTaskWithMoreToGain) {
  // Two tasks: the first 10x slower than the second, both improving alike:
  // trials on the first reduce the total latency more.
  TaskScheduler scheduler({1, 1});
  scheduler.Dispatch(0, 32);
  scheduler.Dispatch(1, 32);
  scheduler.Report(0, 10e-3);
  scheduler.Report(1, 1e-3);
  EXPECT_EQ(scheduler.Next(), 0);
  EXPECT_NEAR(scheduler.TotalLatency(), 11e-3, 1e-12);
}

TEST(TaskScheduler, WeightsCount) {
  // The second runs 20 times per model run: 20 x 1 ms outweighs 10 ms.
  TaskScheduler scheduler({1, 20});
  scheduler.Dispatch(0, 32);
  scheduler.Dispatch(1, 32);
  scheduler.Report(0, 10e-3);
  scheduler.Report(1, 1e-3);
  EXPECT_EQ(scheduler.Next(), 1);
  EXPECT_NEAR(scheduler.TotalLatency(), 30e-3, 1e-12);
}

TEST(TaskScheduler, RecentProgressCounts) {
  // Equal latencies now, but task 1 just fell fast: its slope wins.
  TaskScheduler scheduler({1, 1});
  scheduler.Dispatch(0, 32);
  scheduler.Dispatch(1, 32);
  scheduler.Report(0, 2e-3);
  scheduler.Report(1, 8e-3);
  scheduler.Dispatch(0, 32);
  scheduler.Dispatch(1, 32);
  scheduler.Report(0, 2e-3);
  scheduler.Report(1, 2e-3);
  EXPECT_EQ(scheduler.Next(), 1);
}

TEST(TaskScheduler, FailedTaskIsRetriedAndDoneTasksAreNot) {
  TaskScheduler scheduler({1, 1});
  scheduler.Dispatch(0, 32);
  scheduler.Dispatch(1, 32);
  scheduler.Report(0, 1e-3);
  scheduler.Report(1, std::nullopt);  // everything failed
  EXPECT_EQ(scheduler.Next(), 1);
  scheduler.MarkDone(1);
  EXPECT_EQ(scheduler.Next(), 0);
  scheduler.MarkDone(0);
  EXPECT_FALSE(scheduler.Next().has_value());
}

TEST(TaskScheduler, ATaskInFlightComesLast) {
  TaskScheduler scheduler({1, 1});
  scheduler.Dispatch(0, 32);
  scheduler.Dispatch(1, 32);
  scheduler.Report(0, 1e-3);
  // Task 1's first batch has no result yet: task 0 goes on.
  EXPECT_EQ(scheduler.Next(), 0);
  // A single task whose batch is in flight still gets the next one.
  TaskScheduler single({1});
  single.Dispatch(0, 32);
  EXPECT_EQ(single.Next(), 0);
}

}  // namespace
}  // namespace lathe::tuner
