// Tests of PairwiseAccuracy (tuner/cost_model/pairwise_accuracy.cc) on cases
// small enough to count the pairs by hand.
#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "tuner/cost_model/cost_model.h"

namespace lathe::tuner {
namespace {

TEST(PairwiseAccuracy, PerfectOrderIsOne) {
  EXPECT_EQ(PairwiseAccuracy({1, 2, 3, 4}, {10, 20, 30, 40}, {0, 0, 0, 0}),
            1.0);
}

TEST(PairwiseAccuracy, ReversedOrderIsZero) {
  EXPECT_EQ(PairwiseAccuracy({4, 3, 2, 1}, {10, 20, 30, 40}, {0, 0, 0, 0}),
            0.0);
}

TEST(PairwiseAccuracy, OnlyScoreOrderMattersNotScale) {
  EXPECT_EQ(PairwiseAccuracy({-100, 0.5, 7}, {1, 2, 3}, {0, 0, 0}), 1.0);
}

TEST(PairwiseAccuracy, CountsEachPairOnce) {
  // Pairs (fast, slow) by throughput: (1,0) right, (2,0) right, (2,1) wrong.
  EXPECT_DOUBLE_EQ(PairwiseAccuracy({1, 3, 2}, {10, 20, 30}, {0, 0, 0}),
                   2.0 / 3);
}

TEST(PairwiseAccuracy, IgnoresPairsOfEqualThroughput) {
  // Rows 0 and 1 tie (10 = 10); whatever their scores, they are no pair. The
  // other two pairs are right. Counted as wrong, the tie would give 2/3.
  EXPECT_EQ(PairwiseAccuracy({2, 1, 3}, {10, 10, 20}, {0, 0, 0}), 1.0);
  // Only ties: no pair at all.
  EXPECT_EQ(PairwiseAccuracy({1, 2, 3}, {5, 5, 5}, {0, 0, 0}), 0.5);
}

TEST(PairwiseAccuracy, EqualScoresCountHalf) {
  EXPECT_EQ(PairwiseAccuracy({0, 0}, {1, 2}, {0, 0}), 0.5);
  // (0,1) scored equal: 1/2; (0,2) and (1,2) right.
  EXPECT_DOUBLE_EQ(PairwiseAccuracy({0, 0, 1}, {1, 2, 3}, {0, 0, 0}), 2.5 / 3);
}

TEST(PairwiseAccuracy, IgnoresPairsAcrossGroups) {
  // Inside each group the order is right; across groups it is wrong
  // everywhere (group 1 is faster but scored lower).
  EXPECT_EQ(PairwiseAccuracy({1, 2, -5, -4}, {1, 2, 100, 200}, {0, 0, 1, 1}),
            1.0);
  // The same rows interleaved.
  EXPECT_EQ(PairwiseAccuracy({1, -5, 2, -4}, {1, 100, 2, 200}, {0, 1, 0, 1}),
            1.0);
}

TEST(PairwiseAccuracy, WeighsPairsNotGroups) {
  // Group 7: three pairs, all right. Group 3: one pair, wrong. 3 of 4.
  EXPECT_EQ(PairwiseAccuracy({1, 2, 3, 2, 1}, {1, 2, 3, 1, 2}, {7, 7, 7, 3, 3}),
            0.75);
}

TEST(PairwiseAccuracy, AToleranceLeavesOutPairsWithinIt) {
  // Throughputs 100, 102, 150: with 5% the (102, 100) pair, ordered wrong
  // here, is left out; the two right pairs remain.
  EXPECT_DOUBLE_EQ(PairwiseAccuracy({2, 1, 3}, {100, 102, 150}, {0, 0, 0}),
                   2.0 / 3);
  EXPECT_DOUBLE_EQ(
      PairwiseAccuracy({2, 1, 3}, {100, 102, 150}, {0, 0, 0}, 0.05), 1.0);
  // Every pair within it: chance, as with no pairs at all.
  EXPECT_DOUBLE_EQ(PairwiseAccuracy({2, 1}, {100, 102}, {0, 0}, 0.05), 0.5);
}

TEST(PairwiseAccuracy, NoPairsIsChance) {
  EXPECT_EQ(PairwiseAccuracy({}, {}, {}), 0.5);
  EXPECT_EQ(PairwiseAccuracy({1}, {1}, {0}), 0.5);
  // Different throughputs, but each row alone in its group.
  EXPECT_EQ(PairwiseAccuracy({2, 1}, {1, 2}, {0, 1}), 0.5);
}

TEST(PairwiseAccuracy, FailuresRankBelowEverything) {
  // A failure (throughput 0) scored above a working program is a wrong pair.
  EXPECT_EQ(PairwiseAccuracy({5, 1}, {0, 3}, {0, 0}), 0.0);
}

TEST(PairwiseAccuracy, NanScoresCountAsTiesNotNan) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  double accuracy = PairwiseAccuracy({nan, 1}, {1, 2}, {0, 0});
  EXPECT_FALSE(std::isnan(accuracy));
  EXPECT_EQ(accuracy, 0.5);
}

TEST(PairwiseAccuracyDeathTest, SizesThatDifferAreABug) {
  EXPECT_DEATH(PairwiseAccuracy({1, 2}, {1}, {0, 0}), "must be as many");
}

}  // namespace
}  // namespace lathe::tuner
