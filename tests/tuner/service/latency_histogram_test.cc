#include "tuner/service/latency_histogram.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

namespace lathe::service {
namespace {

TEST(LatencyHistogram, CountsEachObservationInTheFirstBucketAtOrAboveIt) {
  LatencyHistogram histogram({0.01, 0.1, 1});
  for (double seconds : {0.0, 0.01, 0.02, 0.1, 0.5, 1.0, 7.0, 7.0})
    histogram.Observe(seconds);
  histogram.Observe(std::nan(""));  // dropped
  const HistogramSnapshot snapshot = histogram.Snapshot();
  EXPECT_EQ(snapshot.bounds, (std::vector<double>{0.01, 0.1, 1}));
  // (.., 0.01]: 0 and 0.01; (0.01, 0.1]: 0.02 and 0.1; (0.1, 1]: 0.5 and 1;
  // above: the two 7s.
  EXPECT_EQ(snapshot.counts, (std::vector<uint64_t>{2, 2, 2, 2}));
  EXPECT_EQ(snapshot.count, 8u);
  EXPECT_DOUBLE_EQ(snapshot.sum, 0.01 + 0.02 + 0.1 + 0.5 + 1 + 14);
}

TEST(LatencyHistogram, ObservationsFromManyThreadsAreAllCounted) {
  LatencyHistogram histogram({0.5});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&histogram, t] {
      for (int i = 0; i < 1000; ++i) histogram.Observe(t % 2 == 0 ? 0.25 : 1);
    });
  }
  for (std::thread& thread : threads) thread.join();
  const HistogramSnapshot snapshot = histogram.Snapshot();
  EXPECT_EQ(snapshot.counts, (std::vector<uint64_t>{2000, 2000}));
  EXPECT_EQ(snapshot.count, 4000u);
  EXPECT_DOUBLE_EQ(snapshot.sum, 2000 * 0.25 + 2000 * 1.0);
}

TEST(LatencyHistogramDeathTest, BoundsMustAscend) {
  EXPECT_DEATH(LatencyHistogram({0.1, 0.1}), "not above the one before");
  EXPECT_DEATH(LatencyHistogram({INFINITY}), "not finite");
}

}  // namespace
}  // namespace lathe::service
