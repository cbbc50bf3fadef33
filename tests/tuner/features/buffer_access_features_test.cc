// Tests of the buffer access feature group
// (tuner/features/buffer_access_features.h).
#include "tuner/features/buffer_access_features.h"

#include <gtest/gtest.h>

#include "tests/tuner/features/features_test_util.h"

namespace lathe::tuner {
namespace {

using testing::GroupRow;
using testing::RowOf;

GroupRow BufferRow(const StoreContext& store) {
  return RowOf(BufferAccessFeatureSpecs(), store, ExtractBufferAccessFeatures);
}

TEST(BufferAccessFeatures, MatmulNestBytesLinesAndStridesPerBuffer) {
  testing::MatmulNest mm(16);
  GroupRow row = BufferRow(WalkProgram(mm.program).stores[0]);
  const double n = 4096;  // executions
  // C[i, j]: read and written each execution; k (innermost) reuses it.
  EXPECT_EQ(row["buf.write.bytes"], n * 2 * 4);
  EXPECT_EQ(row["buf.write.unique_bytes"], 16 * 16 * 4);
  EXPECT_EQ(row["buf.write.lines"], 256.0 / 16);
  EXPECT_EQ(row["buf.write.unique_lines"], 16);
  EXPECT_EQ(row["buf.write.stride"], 1);
  EXPECT_EQ(row["buf.write.inner_contiguous"], 0);
  EXPECT_EQ(row["buf.write.inner_broadcast"], 1);
  EXPECT_EQ(row["buf.write.read_write"], 1);
  EXPECT_EQ(row["buf.write.local"], 0);
  EXPECT_EQ(row["buf.write.intermediate"], 0);
  // read0 is B[k, j]: a new line each k step (stride 16 floats).
  EXPECT_EQ(row["buf.read0.bytes"], n * 4);
  EXPECT_EQ(row["buf.read0.lines"], n);
  EXPECT_EQ(row["buf.read0.unique_bytes"], 1024);
  EXPECT_EQ(row["buf.read0.stride"], 16);
  EXPECT_EQ(row["buf.read0.inner_contiguous"], 0);
  // read1 is A[i, k]: contiguous along k.
  EXPECT_EQ(row["buf.read1.lines"], n / 16);
  EXPECT_EQ(row["buf.read1.stride"], 1);
  EXPECT_EQ(row["buf.read1.inner_contiguous"], 1);
  EXPECT_EQ(row["buf.read1.inner_broadcast"], 0);
  EXPECT_EQ(row["buf.other_read_bytes"], 0);
  EXPECT_EQ(row["buf.num_buffers"], 3);
  EXPECT_EQ(row["buf.loads"], 3);  // C, A, B
}

TEST(BufferAccessFeatures, ReadsBeyondTwoSlotsAreSummed) {
  // Y[i] = X0[i] + X1[i] + X2[i] + X3[i]: X2 and X3 go to other_read_*.
  std::vector<BufferPtr> x;
  for (int b = 0; b < 4; ++b)
    x.push_back(MakeBuffer("X" + std::to_string(b), DType::Float32(), {64}));
  BufferPtr y = MakeBuffer("Y", DType::Float32(), {64});
  Expr i = Var("i");
  Expr value =
      Load(x[0], {i}) + Load(x[1], {i}) + Load(x[2], {i}) + Load(x[3], {i});
  Program p =
      testing::MakeProgram(x, {y}, MakeFor(i, 64, MakeStore(y, {i}, value)));
  GroupRow row = BufferRow(WalkProgram(p).stores[0]);
  EXPECT_EQ(row["buf.other_read_bytes"], 2 * 64 * 4);
  EXPECT_EQ(row["buf.other_read_lines"], 2 * 4);
  EXPECT_EQ(row["buf.write.read_write"], 0);
  EXPECT_EQ(row["buf.write.bytes"], 64 * 4);
  EXPECT_EQ(row["buf.num_buffers"], 5);
  EXPECT_EQ(row["buf.loads"], 4);
}

TEST(BufferAccessFeatures, LocalAccumulatorOfTheDefaultSchedule) {
  // Default matmul schedule: the update writes C_local (local, allocated)
  // and reads A broadcast along the vector loop.
  Program lowered =
      testing::DefaultLowered("matmul:M=16,N=16,K=16", /*vector_width=*/8);
  ProgramWalk walk = WalkProgram(lowered);
  ASSERT_EQ(walk.stores.size(), 3u) << PrintProgram(lowered);
  GroupRow update = BufferRow(walk.stores[1]);
  EXPECT_EQ(update["buf.write.local"], 1);
  EXPECT_EQ(update["buf.write.intermediate"], 1);
  EXPECT_EQ(update["buf.write.read_write"], 1);
  EXPECT_EQ(update["buf.write.inner_contiguous"], 1);
  // C_local[8, 8] in one allocation: 256 bytes; A's tile and B's panel.
  EXPECT_EQ(update["buf.write.unique_bytes"], 8 * 8 * 4);
  EXPECT_EQ(
      update["buf.read1.inner_broadcast"] + update["buf.read0.inner_broadcast"],
      1);
  GroupRow write_back = BufferRow(walk.stores[2]);
  EXPECT_EQ(write_back["buf.write.local"], 0);
  EXPECT_EQ(write_back["buf.write.intermediate"], 0);
  EXPECT_EQ(write_back["buf.read0.local"], 1);
}

}  // namespace
}  // namespace lathe::tuner
