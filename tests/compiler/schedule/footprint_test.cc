// Tile footprints (compiler/schedule/footprint.h): a convolution's input
// tile with its halo and its weights' tile, a non-affine dimension, the
// saturation past the cap, and layouts that are malformed in every way a
// trace could carry them.
#include "compiler/schedule/footprint.h"

#include <gtest/gtest.h>

#include <vector>

namespace lathe {
namespace {

// X[c, p + r, q + s] and W[k, c, r, s] over factors k, c, p, q, r, s, each
// loop's tile bounded by 1000.
const std::vector<int64_t> kConvLayout = {
    2,                                // inputs
    3,                                // X: dimensions
    1, 1, 1000, 1, 1,                 //   c
    2, 1, 1000, 1, 2, 1, 1000, 1, 4,  //   p + r
    2, 1, 1000, 1, 3, 1, 1000, 1, 5,  //   q + s
    4,                                // W: dimensions
    1, 1, 1000, 1, 0,                 //   k
    1, 1, 1000, 1, 1,                 //   c
    1, 1, 1000, 1, 4,                 //   r
    1, 1, 1000, 1, 5};                //   s

TEST(Footprint, CountsAConvolutionsTilesWithTheirHalo) {
  // k 32, c 4, p 7, q 28, r 3, s 3: X 4 x 9 x 30, W 32 x 4 x 3 x 3.
  absl::StatusOr<int64_t> elements =
      EvaluateFootprint(kConvLayout, {32, 4, 7, 28, 3, 3}, 1 << 20);
  ASSERT_TRUE(elements.ok()) << elements.status();
  EXPECT_EQ(*elements, 4 * 9 * 30 + 32 * 4 * 9);
  // A stride of 2 and a product of factors: 1 + 2 x (2 x 4 - 1).
  absl::StatusOr<int64_t> strided =
      EvaluateFootprint({1, 1, 1, 2, 100, 2, 0, 1}, {2, 4}, 100);
  ASSERT_TRUE(strided.ok());
  EXPECT_EQ(*strided, 15);
}

TEST(Footprint, ATileIsAtMostItsBound) {
  // One input, one dimension, one term over factors 0 and 1: 6 x 7, or
  // the loop's extent of 5 when the factors' product passes it (a split
  // whose factors overshoot the loop: its tail is predicated).
  absl::StatusOr<int64_t> whole =
      EvaluateFootprint({1, 1, 1, 1, 1000, 2, 0, 1}, {6, 7}, 1000);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(*whole, 42);
  absl::StatusOr<int64_t> bounded =
      EvaluateFootprint({1, 1, 1, 1, 5, 2, 0, 1}, {6, 7}, 1000);
  ASSERT_TRUE(bounded.ok());
  EXPECT_EQ(*bounded, 5);
}

TEST(Footprint, SaturatesPastTheCap) {
  absl::StatusOr<int64_t> huge = EvaluateFootprint(
      kConvLayout, {int64_t{1} << 40, int64_t{1} << 40, 7, 28, 3, 3}, 8192);
  ASSERT_TRUE(huge.ok());
  EXPECT_EQ(*huge, 8193);
}

TEST(Footprint, RefusesMalformedLayouts) {
  const std::vector<int64_t> factors = {2, 3};
  for (const std::vector<int64_t>& layout : std::vector<std::vector<int64_t>>{
           {},                       // no count of inputs
           {1},                      // an input without dimensions
           {1, 1, 1, 1, 10, 1, 2},   // factor index 2 of 2
           {1, 1, 1, 1, 10, 1, -1},  // a negative index
           {1, 1, 1, int64_t{1} << 30, 10, 1, 0},  // a huge coefficient
           {1, 1, 1, 1, 0, 1, 0},                  // a bound of 0
           {1, 1, 1, 1, 10, 1, 0, 7},              // a word left over
           {-1},                                   // a negative count
           {1, 1, 5, 1, 10, 1, 0}}) {              // more terms than words
    absl::StatusOr<int64_t> elements = EvaluateFootprint(layout, factors, 100);
    EXPECT_EQ(elements.status().code(), absl::StatusCode::kInvalidArgument)
        << ::testing::PrintToString(layout);
  }
  EXPECT_EQ(EvaluateFootprint(std::vector<int64_t>(kMaxFootprintLayout + 1, 0),
                              factors, 100)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EvaluateFootprint({1, 1, 1, 1, 10, 1, 0}, {0}, 100).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EvaluateFootprint({0}, {}, -1).status().code(),
            absl::StatusCode::kInvalidArgument);
  // No inputs: nothing held.
  EXPECT_EQ(EvaluateFootprint({0}, {}, 100).value(), 0);
}

}  // namespace
}  // namespace lathe
