// Tests of the reuse feature group (tuner/features/reuse_features.h).
#include "tuner/features/reuse_features.h"

#include <gtest/gtest.h>

#include "tests/tuner/features/features_test_util.h"

namespace lathe::tuner {
namespace {

using testing::GroupRow;
using testing::RowOf;

GroupRow ReuseRow(const StoreContext& store) {
  return RowOf(ReuseFeatureSpecs(), store, ExtractReuseFeatures);
}

TEST(ReuseFeatures, MatmulNestReuseDistancesPerBuffer) {
  // i, j, k over 16; each row of 16 floats is one line.
  testing::MatmulNest mm(16);
  GroupRow row = ReuseRow(WalkProgram(mm.program).stores[0]);
  // C[i, j] is reused across k, the innermost loop: the next use is the
  // next execution, 3 lines (one per buffer) apart.
  EXPECT_EQ(row["reuse.write.distance_iters"], 1);
  EXPECT_EQ(row["reuse.write.distance_bytes"], 3 * 64);
  EXPECT_EQ(row["reuse.write.count"], 16);
  // read0 = B[k, j], reused across i: 256 executions apart, during which
  // A's row (1 line), all of B (16) and C's row (1) are touched.
  EXPECT_EQ(row["reuse.read0.distance_iters"], 256);
  EXPECT_EQ(row["reuse.read0.distance_bytes"], 18 * 64);
  EXPECT_EQ(row["reuse.read0.count"], 16);
  // read1 = A[i, k], reused across j: 16 executions apart (one k sweep:
  // A's row, B's column of 16 lines, one C).
  EXPECT_EQ(row["reuse.read1.distance_iters"], 16);
  EXPECT_EQ(row["reuse.read1.distance_bytes"], 18 * 64);
  EXPECT_EQ(row["reuse.read1.count"], 16);
}

TEST(ReuseFeatures, SmallNestFitsEveryCacheLevel) {
  testing::MatmulNest mm(16);
  GroupRow row = ReuseRow(WalkProgram(mm.program).stores[0]);
  // All of A, B, C: 48 lines, brought in once.
  for (const char* level : {"l1", "l2", "l3"}) {
    EXPECT_EQ(row[std::string("reuse.") + level + "_traffic_bytes"], 48 * 64)
        << level;
    EXPECT_EQ(row[std::string("reuse.") + level + "_fit_depth"], 0) << level;
  }
  // 2 flops per execution. Innermost loop (k): 32 flops over A's row, B's
  // column and C's element (18 lines); the nest: 8192 over 48 lines.
  EXPECT_DOUBLE_EQ(row["reuse.intensity_inner1"], 32.0 / (18 * 64));
  EXPECT_DOUBLE_EQ(row["reuse.intensity_inner2"],
                   2.0 * 256 / ((1 + 16 + 1) * 64));
  EXPECT_DOUBLE_EQ(row["reuse.intensity_nest"], 8192.0 / (48 * 64));
}

TEST(ReuseFeatures, LargeNestReloadsWhatDoesNotFit) {
  // 256^3: each matrix is 256 KiB (4096 lines).
  testing::MatmulNest mm(256);
  GroupRow row = ReuseRow(WalkProgram(mm.program).stores[0]);
  // L1 (32 KiB): the whole nest (768 KiB) and one i (A's row 16 lines, all
  // of B, C's row 16 lines) do not fit; one j does: A's row (16 lines), B's
  // column (256 lines), one C (1 line) = 273 lines, reloaded for each of
  // the 256 * 256 (i, j).
  EXPECT_EQ(row["reuse.l1_traffic_bytes"], 273.0 * 64 * 256 * 256);
  EXPECT_DOUBLE_EQ(row["reuse.l1_fit_depth"], 2.0 / 3);
  // L2 (1 MiB) and L3 hold everything: each line comes in once.
  EXPECT_EQ(row["reuse.l2_traffic_bytes"], 3 * 4096 * 64);
  EXPECT_EQ(row["reuse.l2_fit_depth"], 0);
}

TEST(ReuseFeatures, AccessMovedByEveryLoopHasNoReuse) {
  BufferPtr x = MakeBuffer("X", DType::Float32(), {8, 8});
  BufferPtr y = MakeBuffer("Y", DType::Float32(), {8, 8});
  Expr i = Var("i"), j = Var("j");
  Program p = testing::MakeProgram(
      {x}, {y},
      MakeFor(i, 8, MakeFor(j, 8, MakeStore(y, {i, j}, Load(x, {i, j})))));
  GroupRow row = ReuseRow(WalkProgram(p).stores[0]);
  for (const char* slot : {"write", "read0"}) {
    for (const char* f : {"distance_iters", "distance_bytes", "count"}) {
      EXPECT_EQ(row[std::string("reuse.") + slot + "." + f], 0) << slot << f;
    }
  }
  EXPECT_EQ(row["reuse.read1.count"], 0);     // no second read
  EXPECT_EQ(row["reuse.intensity_nest"], 0);  // a copy does no float work
}

}  // namespace
}  // namespace lathe::tuner
