#include "compiler/interp/tensor_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace lathe {
namespace {

TEST(TensorData, LikeIsZeroFilledAndShaped) {
  Buffer b{"A", DType::Float32(), {2, 3}, BufferScope::kGlobal};
  TensorData t = TensorData::Like(b);
  EXPECT_EQ(t.dtype, DType::Float32());
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.values, std::vector<double>(6, 0.0));
}

TEST(RoundToDType, Float32RoundsToNearestFloat) {
  EXPECT_EQ(RoundToDType(0.1, DType::Float32()), static_cast<double>(0.1f));
  EXPECT_NE(RoundToDType(0.1, DType::Float32()), 0.1);
  EXPECT_EQ(RoundToDType(1.0 + std::ldexp(1.0, -30), DType::Float32()), 1.0);
  EXPECT_EQ(RoundToDType(1e300, DType::Float32()),
            std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(RoundToDType(NAN, DType::Float32())));
  // float64 is exact.
  EXPECT_EQ(RoundToDType(0.1, DType(DType::Code::kFloat, 64)), 0.1);
}

TEST(RoundToDType, Int8TruncatesAndWraps) {
  EXPECT_EQ(RoundToDType(127, DType::Int8()), 127);
  EXPECT_EQ(RoundToDType(128, DType::Int8()), -128);
  EXPECT_EQ(RoundToDType(200, DType::Int8()), -56);
  EXPECT_EQ(RoundToDType(-129, DType::Int8()), 127);
  EXPECT_EQ(RoundToDType(-300, DType::Int8()), -44);
  EXPECT_EQ(RoundToDType(2.9, DType::Int8()), 2);
  EXPECT_EQ(RoundToDType(-2.9, DType::Int8()), -2);
  EXPECT_EQ(RoundToDType(256 * 3 + 5, DType::Int8()), 5);
}

TEST(RoundToDType, HugeAndNonFiniteValuesAreDefined) {
  // A cast of such values to int64 would be undefined behaviour.
  EXPECT_EQ(RoundToDType(1e30, DType::Int8()), 0);  // 1e30 is a multiple of 256
  EXPECT_EQ(
      RoundToDType(std::ldexp(1.0, 70) + std::ldexp(1.0, 20), DType::Int32()),
      1048576);
  EXPECT_EQ(
      RoundToDType(std::ldexp(1.0, 70) + std::ldexp(1.0, 31), DType::Int32()),
      -2147483648.0);
  EXPECT_EQ(RoundToDType(INFINITY, DType::Int32()), 0);
  EXPECT_EQ(RoundToDType(-INFINITY, DType::Int8()), 0);
  EXPECT_EQ(RoundToDType(NAN, DType::Int32()), 0);
}

TEST(RoundToDType, Int32AndUnsignedAndBool) {
  EXPECT_EQ(RoundToDType(2147483648.0, DType::Int32()), -2147483648.0);
  EXPECT_EQ(RoundToDType(-1, DType(DType::Code::kUInt, 8)), 255);
  EXPECT_EQ(RoundToDType(256, DType(DType::Code::kUInt, 8)), 0);
  EXPECT_EQ(RoundToDType(0.5, DType::Bool()), 1);
  EXPECT_EQ(RoundToDType(0, DType::Bool()), 0);
}

}  // namespace
}  // namespace lathe
