#include "compiler/interp/random_fill.h"

#include <gtest/gtest.h>

#include <set>

namespace lathe {
namespace {

TEST(SplitMix64, MatchesTheReferenceSequence) {
  // The first outputs of splitmix64 from state 0 (Vigna's reference code):
  // any change here changes every stored reference value.
  uint64_t state = 0;
  EXPECT_EQ(SplitMix64(&state), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(SplitMix64(&state), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(SplitMix64(&state), 0x06c45d188009454fULL);
}

TEST(FillRandom, FloatsAreDeterministicFloat32InMinusOneToOne) {
  TensorData a(DType::Float32(), {16, 16});
  TensorData b(DType::Float32(), {16, 16});
  FillRandom(&a, 42);
  FillRandom(&b, 42);
  EXPECT_EQ(a.values, b.values);
  std::set<double> distinct;
  for (double v : a.values) {
    EXPECT_GE(v, -1.0);
    EXPECT_LE(v, 1.0);
    EXPECT_EQ(v, static_cast<double>(static_cast<float>(v)));
    distinct.insert(v);
  }
  EXPECT_GT(distinct.size(), 250u);
  TensorData c(DType::Float32(), {16, 16});
  FillRandom(&c, 43);
  EXPECT_NE(a.values, c.values);
}

TEST(FillRandom, FirstValueIsStable) {
  // Pins the mapping from bits to values, so that it stays the same on
  // every machine and version.
  TensorData a(DType(DType::Code::kFloat, 64), {1});
  FillRandom(&a, 0);
  uint64_t state = 0;
  double expected =
      static_cast<double>(SplitMix64(&state) >> 11) * 0x1.0p-53 * 2 - 1;
  EXPECT_EQ(a.values[0], expected);
  EXPECT_NEAR(a.values[0], 0.7666, 1e-3);
}

TEST(FillRandom, IntegersAreSmall) {
  TensorData a(DType::Int32(), {1000});
  FillRandom(&a, 1);
  std::set<double> seen(a.values.begin(), a.values.end());
  EXPECT_EQ(*seen.begin(), -4);
  EXPECT_EQ(*seen.rbegin(), 4);
  EXPECT_EQ(seen.size(), 9u);
  TensorData u(DType(DType::Code::kUInt, 8), {1000});
  FillRandom(&u, 1);
  for (double v : u.values) {
    EXPECT_GE(v, 0);
    EXPECT_LE(v, 8);
  }
  TensorData b(DType::Bool(), {100});
  FillRandom(&b, 1);
  for (double v : b.values) EXPECT_TRUE(v == 0 || v == 1);
}

}  // namespace
}  // namespace lathe
