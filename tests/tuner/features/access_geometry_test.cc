// Tests of footprints, strides and lines (tuner/features/access_geometry.h).
#include "tuner/features/access_geometry.h"

#include <gtest/gtest.h>

#include "tests/tuner/features/features_test_util.h"

namespace lathe::tuner {
namespace {

using testing::MatmulNest;

// C[i, j] += A[i, k] * B[k, j], 16^3, float32: a row of 16 floats is one
// 64-byte line.
class MatmulGeometry : public ::testing::Test {
 protected:
  MatmulGeometry() : mm_(16), walk_(WalkProgram(mm_.program)) {}
  const StoreContext& store() const { return walk_.stores[0]; }
  const BufferUse& c() const { return store().buffers[0]; }
  const BufferUse& a() const { return store().buffers[1]; }
  const BufferUse& b() const { return store().buffers[2]; }

  MatmulNest mm_;
  ProgramWalk walk_;
};

TEST_F(MatmulGeometry, FootprintsShrinkFromTheWholeNestToOneExecution) {
  // Whole nest: every buffer in full, 256 elements in 16 lines.
  EXPECT_EQ(a().footprint_elements[0], 256);
  EXPECT_EQ(a().footprint_lines[0], 16);
  // Inside j (j and k run, i fixed): A's row i (16 elements, one line), B in
  // full, C's row i.
  EXPECT_EQ(a().footprint_elements[1], 16);
  EXPECT_EQ(a().footprint_lines[1], 1);
  EXPECT_EQ(b().footprint_elements[1], 256);
  EXPECT_EQ(c().footprint_lines[1], 1);
  // Inside k: A's row (1 line), B's column (16 elements on 16 lines), one C.
  EXPECT_EQ(a().footprint_lines[2], 1);
  EXPECT_EQ(b().footprint_elements[2], 16);
  EXPECT_EQ(b().footprint_lines[2], 16);
  EXPECT_EQ(c().footprint_elements[2], 1);
  // One execution: one element each.
  for (const BufferUse& use : store().buffers) {
    EXPECT_EQ(use.footprint_elements[3], 1);
    EXPECT_EQ(use.footprint_lines[3], 1);
  }
}

TEST_F(MatmulGeometry, StridesAreTheFlatIndexStepOfEachLoop) {
  EXPECT_EQ(a().strides, (std::vector<int64_t>{16, 0, 1}));
  EXPECT_EQ(b().strides, (std::vector<int64_t>{0, 1, 16}));
  EXPECT_EQ(c().strides, (std::vector<int64_t>{16, 1, 0}));
  EXPECT_EQ(a().uses_loop, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(InnermostNonZeroStride(c()), 1);
  EXPECT_EQ(InnermostNonZeroStride(b()), 16);
}

TEST_F(MatmulGeometry, LinesAndBytesAccessedFollowTheInnermostMovingLoop) {
  // A moves by 4 bytes per k step: a new line every 16 steps.
  EXPECT_DOUBLE_EQ(LinesAccessed(store(), a()), 4096.0 / 16);
  // B moves a whole line (16 floats) per k step.
  EXPECT_DOUBLE_EQ(LinesAccessed(store(), b()), 4096);
  // C moves with j only (k reuses it): 256 j steps, 4 bytes each.
  EXPECT_DOUBLE_EQ(LinesAccessed(store(), c()), 256.0 / 16);
  // C is read and written: 2 accesses of 4 bytes per execution.
  EXPECT_DOUBLE_EQ(BytesAccessed(store(), c()), 4096.0 * 2 * 4);
  EXPECT_DOUBLE_EQ(BytesAccessed(store(), a()), 4096.0 * 4);
}

TEST_F(MatmulGeometry, ReadSlotsPutTheCostliestReadFirst) {
  EXPECT_EQ(store().read_order, (std::vector<int>{2, 1}));  // B, then A
}

TEST(AccessGeometry, UnionsTheBoxesOfSeveralIndexTuples) {
  // Y[i] = X[i] + X[i + 1], i in [0, 8): X[0..8] is 9 elements, one line.
  BufferPtr x = MakeBuffer("X", DType::Float32(), {9});
  BufferPtr y = MakeBuffer("Y", DType::Float32(), {8});
  Expr i = Var("i");
  Program p = testing::MakeProgram(
      {x}, {y},
      MakeFor(i, 8, MakeStore(y, {i}, Load(x, {i}) + Load(x, {i + 1}))));
  ProgramWalk walk = WalkProgram(p);
  const BufferUse& use = walk.stores[0].buffers[1];
  EXPECT_EQ(use.index_tuples.size(), 2u);
  EXPECT_EQ(use.num_accesses, 2);
  EXPECT_EQ(use.footprint_elements[0], 9);
  EXPECT_EQ(use.footprint_lines[0], 1);
  EXPECT_EQ(use.footprint_elements[1], 2);  // one execution: X[i], X[i + 1]
}

TEST(AccessGeometry, FusedLoopIndicesGetTheirFirstStepAsStride) {
  // Y[f // 4, f % 4] over f in [0, 16) on a [4, 4] buffer: contiguous.
  BufferPtr y = MakeBuffer("Y", DType::Float32(), {4, 4});
  Expr f = Var("f");
  Program p = testing::MakeProgram(
      {}, {y},
      MakeFor(f, 16,
              MakeStore(y, {FloorDiv(f, 4), FloorMod(f, 4)}, Expr(0.0))));
  ProgramWalk walk = WalkProgram(p);
  const BufferUse& use = walk.stores[0].buffers[0];
  EXPECT_EQ(use.strides, (std::vector<int64_t>{1}));
  EXPECT_EQ(use.footprint_elements[0], 16);
  EXPECT_EQ(use.footprint_lines[0], 1);
}

TEST(AccessGeometry, PartialRowsAreSeparateRunsOfLines) {
  // Y[i, j] for i in [0, 4), j in [0, 20) of a [4, 64] buffer: 4 runs of 80
  // bytes, 2 lines each. The full last dimension would merge rows.
  BufferPtr y = MakeBuffer("Y", DType::Float32(), {4, 64});
  BufferPtr z = MakeBuffer("Z", DType::Float32(), {4, 64});
  Expr i = Var("i"), j = Var("j"), i2 = Var("i2"), j2 = Var("j2");
  std::vector<StmtPtr> nests;
  nests.push_back(
      MakeFor(i, 4, MakeFor(j, 20, MakeStore(y, {i, j}, Expr(0.0)))));
  nests.push_back(
      MakeFor(i2, 4, MakeFor(j2, 64, MakeStore(z, {i2, j2}, Expr(0.0)))));
  Program p = testing::MakeProgram({}, {y, z}, MakeSeq(std::move(nests)));
  ProgramWalk walk = WalkProgram(p);
  EXPECT_EQ(walk.stores[0].buffers[0].footprint_lines[0], 8);
  EXPECT_EQ(walk.stores[1].buffers[0].footprint_lines[0], 16);  // 1024 bytes
  EXPECT_EQ(walk.num_loop_nests, 2);
}

TEST(AccessGeometry, ClipsBoxesToTheBufferShape) {
  // Y[i + j] over i, j in [0, 8) on a buffer of 10: at most 10 elements.
  BufferPtr y = MakeBuffer("Y", DType::Float32(), {10});
  Expr i = Var("i"), j = Var("j");
  Program p = testing::MakeProgram(
      {}, {y}, MakeFor(i, 8, MakeFor(j, 8, MakeStore(y, {i + j}, Expr(0.0)))));
  ProgramWalk walk = WalkProgram(p);
  EXPECT_EQ(walk.stores[0].buffers[0].footprint_elements[0], 10);
  EXPECT_EQ(walk.stores[0].buffers[0].footprint_elements[1], 8);
}

}  // namespace
}  // namespace lathe::tuner
