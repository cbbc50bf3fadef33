#include "tuner/search/mutate_tile_size.h"

#include <gtest/gtest.h>

#include "tests/tuner/search/mutator_test_space.h"

namespace lathe::tuner {
namespace {

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

TEST(MutateTileSize, ChangesOneTileKeepingItsProduct) {
  const Trace space = testing::SampleSpace(3);
  MutateTileSize mutator;
  Rng rng(11);
  int changed_runs = 0;
  for (int run = 0; run < 100; ++run) {
    std::optional<Decisions> mutated =
        mutator.Apply(space, space.decisions, rng);
    ASSERT_TRUE(mutated.has_value());
    int differences = 0;
    for (const auto& [index, values] : space.decisions) {
      if (mutated->at(index) == values) continue;
      ++differences;
      EXPECT_EQ(space.instructions[index].kind, "sample_perfect_tile");
      EXPECT_EQ(Product(mutated->at(index)), Product(values));
      EXPECT_LE(mutated->at(index).back(), 16);  // max_innermost
    }
    EXPECT_EQ(differences, 1);
    changed_runs += differences;
    // The mutated point replays: it is a point of the same space.
    EXPECT_TRUE(ReplayTrace(space, testing::MatmulProgram(), *mutated).ok());
  }
  EXPECT_EQ(changed_runs, 100);
}

TEST(MutateTileSize, NothingToChangeWithoutTiles) {
  TracedSchedule sch(testing::MatmulProgram());
  sch.SampleCategorical({1, 2}, {0.5, 0.5}).value();
  MutateTileSize mutator;
  Rng rng(1);
  EXPECT_FALSE(
      mutator.Apply(sch.trace(), sch.trace().decisions, rng).has_value());
}

TEST(MutateTileSize, PrimeExtentCannotChange) {
  TracedSchedule sch(ParseWorkloadSpec("matmul:M=13,N=8,K=8")
                         .value()
                         .InitialProgram()
                         .value());
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  // 13 = 13 x 1 or 1 x 13 with the inner at most 4: only {13, 1} is valid.
  sch.SamplePerfectTile(loops[0], 2, 4).value();
  MutateTileSize mutator;
  Rng rng(1);
  EXPECT_FALSE(
      mutator.Apply(sch.trace(), sch.trace().decisions, rng).has_value());
}

}  // namespace
}  // namespace lathe::tuner
