#include "compiler/schedule/primitive/sampling.h"

#include <gtest/gtest.h>

#include <set>

#include "compiler/schedule/random.h"

namespace lathe {
namespace {

TEST(SamplePerfectTile, ProductIsExtentAndInnermostBounded) {
  Rng rng(7);
  std::set<std::vector<int64_t>> seen;
  for (int i = 0; i < 200; ++i) {
    auto f = primitive::SamplePerfectTile(&rng, 96, 3, 8).value();
    ASSERT_EQ(f.size(), 3u);
    EXPECT_EQ(f[0] * f[1] * f[2], 96);
    EXPECT_LE(f[2], 8);
    EXPECT_TRUE(primitive::CheckPerfectTile(f, 96, 3, 8).ok());
    seen.insert(f);
  }
  EXPECT_GT(seen.size(), 10u);  // it explores, not one fixed answer
}

TEST(SamplePerfectTile, PrimeExtent) {
  Rng rng(3);
  for (int i = 0; i < 20; ++i) {
    auto f = primitive::SamplePerfectTile(&rng, 13, 2, 4).value();
    EXPECT_EQ(f, (std::vector<int64_t>{13, 1}));
  }
}

TEST(SamplePerfectTile, SameSeedSameDecisions) {
  Rng a(99), b(99);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(primitive::SamplePerfectTile(&a, 1024, 4, 64).value(),
              primitive::SamplePerfectTile(&b, 1024, 4, 64).value());
  }
}

TEST(CheckPerfectTile, RejectsInvalidDecisions) {
  EXPECT_FALSE(primitive::CheckPerfectTile({4, 4}, 32, 2, 16).ok());
  EXPECT_FALSE(primitive::CheckPerfectTile({2, 16}, 32, 2, 8).ok());
  EXPECT_FALSE(primitive::CheckPerfectTile({32}, 32, 2, 8).ok());
  EXPECT_FALSE(primitive::CheckPerfectTile({-2, -16}, 32, 2, 64).ok());
}

TEST(SampleCategorical, FollowsProbabilities) {
  Rng rng(5);
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < 3000; ++i) {
    counts[primitive::SampleCategorical(&rng, {10, 20, 30}, {0.5, 0.5, 0})
               .value()]++;
  }
  EXPECT_EQ(counts[2], 0);
  EXPECT_GT(counts[0], 1300);
  EXPECT_GT(counts[1], 1300);
  EXPECT_FALSE(primitive::SampleCategorical(&rng, {1, 2}, {0.5}).ok());
  EXPECT_FALSE(primitive::CheckCategorical(3, {1, 2, 3}, {1, 1, 1}).ok());
}

// A decision is checked against a distribution the sampler would accept:
// a trace replayed with its decisions is mutated (sampled again) later.
TEST(CheckCategorical, RefusesADecisionOfABadDistribution) {
  EXPECT_TRUE(primitive::CheckCategorical(1, {1, 2}, {0.5, 0.5}).ok());
  absl::Status fewer = primitive::CheckCategorical(1, {1, 2}, {0.5});
  ASSERT_FALSE(fewer.ok());
  EXPECT_EQ(fewer.message(),
            "sample_categorical: 2 candidates and 1 probabilities");
  EXPECT_FALSE(primitive::CheckCategorical(0, {1, 2}, {-1, 2}).ok());
  EXPECT_FALSE(primitive::CheckCategorical(0, {1, 2}, {0, 0}).ok());
  EXPECT_FALSE(primitive::CheckCategorical(0, {}, {}).ok());
}

TEST(Rng, GoldenSequence) {
  // Sampling must be identical on every machine: splitmix64's reference values.
  Rng rng(0);
  EXPECT_EQ(rng.Next(), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(rng.Next(), 0x6e789e6aa1b965f4ULL);
}

}  // namespace
}  // namespace lathe
