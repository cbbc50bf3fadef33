#include "compiler/interp/allclose.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace lathe {
namespace {

using ::testing::HasSubstr;

TensorData Make(std::vector<int64_t> shape, std::vector<double> values,
                DType dtype = DType::Float32()) {
  TensorData t(dtype, std::move(shape));
  t.values = std::move(values);
  return t;
}

TEST(CheckAllClose, AcceptsValuesWithinTolerance) {
  TensorData a = Make({3}, {1.0, 2.0, 100.0});
  TensorData e = Make({3}, {1.0 + 1e-7, 2.0, 100.001});
  EXPECT_TRUE(CheckAllClose(a, e, /*rtol=*/1e-5, /*atol=*/1e-6, "out").ok());
  EXPECT_FALSE(CheckAllClose(a, e, /*rtol=*/0, /*atol=*/1e-6, "out").ok());
}

TEST(CheckAllClose, NamesFirstMismatchValuesAndCount) {
  TensorData a = Make({2, 3}, {0, 1, 2, 3, 4, 5});
  TensorData e = Make({2, 3}, {0, 1, 2.5, 3, 4, 9});
  absl::Status s = CheckAllClose(a, e, 1e-5, 1e-6, "output C");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "output C: 2 of 6 elements differ (rtol 1e-05, atol 1e-06); first "
            "at [0, 2]: "
            "actual 2, expected 2.5; largest error 4 at [1, 2]: actual 5, "
            "expected 9");
}

TEST(CheckAllClose, NanAndInfinity) {
  EXPECT_TRUE(CheckAllClose(Make({2}, {NAN, INFINITY}),
                            Make({2}, {NAN, INFINITY}), 0, 0, "x")
                  .ok());
  EXPECT_FALSE(CheckAllClose(Make({1}, {NAN}), Make({1}, {1}), 1, 1, "x").ok());
  EXPECT_FALSE(CheckAllClose(Make({1}, {1}), Make({1}, {NAN}), 1, 1, "x").ok());
  EXPECT_FALSE(
      CheckAllClose(Make({1}, {INFINITY}), Make({1}, {-INFINITY}), 1, 1, "x")
          .ok());
  EXPECT_FALSE(
      CheckAllClose(Make({1}, {1e300}), Make({1}, {INFINITY}), 1, 1, "x").ok());
}

// The element test CheckAllClose applies, for comparisons in place.
TEST(CheckAllClose, IsCloseIsItsElementTest) {
  EXPECT_TRUE(IsClose(1.0, 1.0 + 1e-6, 1e-5, 0));
  EXPECT_FALSE(IsClose(1.0, 1.1, 1e-5, 1e-3));
  EXPECT_TRUE(IsClose(0.0, 1e-4, 0, 1e-3));
  EXPECT_TRUE(IsClose(NAN, NAN, 0, 0));
  EXPECT_FALSE(IsClose(NAN, 1.0, 1, 1));
  EXPECT_TRUE(IsClose(INFINITY, INFINITY, 0, 0));
  EXPECT_FALSE(IsClose(INFINITY, 1e30, 1, 1));
}

TEST(CheckAllClose, RejectsShapeAndDTypeMismatch) {
  absl::Status s =
      CheckAllClose(Make({2, 3}, std::vector<double>(6)),
                    Make({3, 2}, std::vector<double>(6)), 0, 0, "C");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "C: shape [2, 3], expected [3, 2]");
  s = CheckAllClose(Make({1}, {0}, DType::Int32()), Make({1}, {0}), 0, 0, "C");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("dtype int32, expected float32"));
}

}  // namespace
}  // namespace lathe
