// Tests of the loop nest feature group (tuner/features/loop_nest_features.h).
#include "tuner/features/loop_nest_features.h"

#include <gtest/gtest.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/schedule/schedule.h"
#include "tests/tuner/features/features_test_util.h"

namespace lathe::tuner {
namespace {

using testing::GroupRow;
using testing::RowOf;

GroupRow NestRow(const StoreContext& store) {
  return RowOf(LoopNestFeatureSpecs(), store, ExtractLoopNestFeatures);
}

// for i0 (outer): for k0 (k_outer): for i1 (16 / outer): for k1 (16 / k_outer):
//   C[i0 * (16 / outer) + i1] += A[i0 * ... + i1, k0 * ... + k1]
// The same computation whatever the splits: only where the iterations sit
// changes.
Program SplitRowSum(int64_t outer, int64_t k_outer) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {16, 16});
  BufferPtr c = MakeBuffer("C", DType::Float32(), {16});
  Expr i0 = Var("i0"), i1 = Var("i1"), k0 = Var("k0"), k1 = Var("k1");
  Expr row = i0 * (16 / outer) + i1;
  Expr col = k0 * (16 / k_outer) + k1;
  StmtPtr store = MakeStore(c, {row}, Load(c, {row}) + Load(a, {row, col}));
  return testing::MakeProgram(
      {a}, {c},
      MakeFor(i0, outer,
              MakeFor(k0, k_outer,
                      MakeFor(i1, 16 / outer,
                              MakeFor(k1, 16 / k_outer, std::move(store))))));
}

TEST(LoopNestFeatures, ReadsEachPositionFromBothEnds) {
  Program p = SplitRowSum(/*outer=*/4, /*k_outer=*/2);
  GroupRow row = NestRow(WalkProgram(p).stores[0]);
  // Innermost first: k1 (8), i1 (4), k0 (2), i0 (4); then nothing.
  EXPECT_EQ(row["nest.inner0_extent"], 8);
  EXPECT_EQ(row["nest.inner0_spatial"], 0);
  EXPECT_EQ(row["nest.inner1_extent"], 4);
  EXPECT_EQ(row["nest.inner1_spatial"], 1);
  EXPECT_EQ(row["nest.inner2_extent"], 2);
  EXPECT_EQ(row["nest.inner2_spatial"], 0);
  EXPECT_EQ(row["nest.inner3_extent"], 4);
  EXPECT_EQ(row["nest.inner3_spatial"], 1);
  EXPECT_EQ(row["nest.inner4_extent"], 0);
  EXPECT_EQ(row["nest.inner4_spatial"], 0);
  // Outermost first: i0 (4), k0 (2), i1 (4), k1 (8).
  EXPECT_EQ(row["nest.outer0_extent"], 4);
  EXPECT_EQ(row["nest.outer0_spatial"], 1);
  EXPECT_EQ(row["nest.outer1_extent"], 2);
  EXPECT_EQ(row["nest.outer3_extent"], 8);
  EXPECT_EQ(row["nest.outer3_spatial"], 0);
  EXPECT_EQ(row["nest.outer4_extent"], 0);
  EXPECT_EQ(row["nest.outer7_extent"], 0);
}

// Splits that only move iterations between levels give other rows here
// (the products, which the other groups read, are the same).
TEST(LoopNestFeatures, TellsApartSplitsWithTheSameProducts) {
  std::vector<std::vector<double>> rows;
  for (auto [outer, k_outer] :
       std::vector<std::pair<int64_t, int64_t>>{{4, 2}, {2, 4}, {4, 4}}) {
    Program p = SplitRowSum(outer, k_outer);
    std::vector<double> values(LoopNestFeatureSpecs().size());
    ExtractLoopNestFeatures(WalkProgram(p).stores[0], values.data());
    rows.push_back(values);
  }
  EXPECT_NE(rows[0], rows[1]);
  EXPECT_NE(rows[0], rows[2]);
  EXPECT_NE(rows[1], rows[2]);
}

TEST(LoopNestFeatures, NamesEveryPositionOnce) {
  const std::vector<StoreFeatureSpec>& specs = LoopNestFeatureSpecs();
  ASSERT_EQ(specs.size(), static_cast<size_t>(4 * kNestPositions));
  for (int p = 0; p < kNestPositions; ++p) {
    for (const char* end : {"inner", "outer"}) {
      int found = 0;
      for (const StoreFeatureSpec& spec : specs) {
        if (spec.name == absl::StrCat("nest.", end, p, "_extent")) ++found;
      }
      EXPECT_EQ(found, 1) << end << p;
    }
  }
}

}  // namespace
}  // namespace lathe::tuner
