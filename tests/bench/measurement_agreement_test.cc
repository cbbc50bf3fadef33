#include "bench/measurement_agreement.h"

#include <vector>

#include "gtest/gtest.h"

namespace lathe::bench {
namespace {

TEST(MeasureAgreement, ComparesEachSideWithTheOthers) {
  // The re-measurement keeps the labels' order; the model has it backwards.
  const RemeasuredBatch batch{{3, 2, 1}, {10, 20, 30}, {11, 19, 31}};
  const Agreement a = MeasureAgreement({batch});
  EXPECT_EQ(a.batches, 1);
  EXPECT_DOUBLE_EQ(a.label_vs_again, 1.0);
  EXPECT_DOUBLE_EQ(a.model_vs_label, 0.0);
  EXPECT_DOUBLE_EQ(a.model_vs_again, 0.0);
  // One of three pairs disagrees between the two measurements.
  const RemeasuredBatch swapped{{1, 2, 3}, {10, 20, 30}, {21, 19, 31}};
  const Agreement b = MeasureAgreement({swapped});
  EXPECT_DOUBLE_EQ(b.label_vs_again, 2.0 / 3);
  EXPECT_DOUBLE_EQ(b.model_vs_label, 1.0);
  EXPECT_DOUBLE_EQ(b.model_vs_again, 2.0 / 3);
}

TEST(MeasureAgreement, LeavesOutProgramsThatFailedTheSecondTime) {
  // Program 1 would disagree with every other, but it failed (0).
  const RemeasuredBatch batch{{1, 9, 2, 3}, {10, 90, 20, 30}, {10, 0, 20, 30}};
  const Agreement a = MeasureAgreement({batch});
  EXPECT_EQ(a.batches, 1);
  EXPECT_DOUBLE_EQ(a.label_vs_again, 1.0);
  EXPECT_DOUBLE_EQ(a.model_vs_label, 1.0);
  // A batch with one program left has no pair: skipped.
  const RemeasuredBatch lone{{1, 2}, {10, 20}, {10, -1}};
  EXPECT_EQ(MeasureAgreement({lone}).batches, 0);
}

TEST(MeasureAgreement, AveragesOverBatchesNotPairs) {
  // 3 pairs, all kept; then 1 pair, flipped.
  const RemeasuredBatch agree{{1, 2, 3}, {1, 2, 3}, {1, 2, 3}};
  const RemeasuredBatch disagree{{1, 2}, {1, 2}, {2, 1}};
  const Agreement a = MeasureAgreement({agree, disagree});
  EXPECT_EQ(a.batches, 2);
  EXPECT_DOUBLE_EQ(a.label_vs_again, 0.5);  // pair-weighted would be 0.75
  EXPECT_DOUBLE_EQ(a.model_vs_label, 1.0);
  EXPECT_DOUBLE_EQ(a.model_vs_again, 0.5);
}

TEST(MeasureAgreement, CountsPairsOfCloseLabels) {
  // 100 and 100.5 are within 1% of each other; 110 is not close to either.
  const RemeasuredBatch batch{{1, 2, 3}, {100, 100.5, 110}, {1, 2, 3}};
  EXPECT_DOUBLE_EQ(MeasureAgreement({batch}).close_share, 1.0 / 3);
  EXPECT_DOUBLE_EQ(MeasureAgreement({batch}, 0.2).close_share, 1.0);
  EXPECT_DOUBLE_EQ(MeasureAgreement({batch}, 0.001).close_share, 0.0);
}

TEST(MeasureAgreement, SkipsBatchesOfUnequalLengths) {
  const RemeasuredBatch broken{{1, 2, 3}, {1, 2}, {1, 2, 3}};
  const Agreement a = MeasureAgreement({broken});
  EXPECT_EQ(a.batches, 0);
  EXPECT_DOUBLE_EQ(a.label_vs_again, 0.0);
  EXPECT_DOUBLE_EQ(a.close_share, 0.0);
}

}  // namespace
}  // namespace lathe::bench
