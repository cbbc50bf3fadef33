#include "tuner/search/mutate_categorical.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/tuner/search/mutator_test_space.h"

namespace lathe::tuner {
namespace {

int64_t CategoricalIndex(const Trace& space) {
  for (size_t i = 0; i < space.instructions.size(); ++i) {
    if (space.instructions[i].kind == "sample_categorical")
      return static_cast<int64_t>(i);
  }
  return -1;
}

TEST(MutateCategorical, DrawsAnotherCandidate) {
  const Trace space = testing::SampleSpace(5);
  const int64_t site = CategoricalIndex(space);
  ASSERT_GE(site, 0);
  const int64_t current = space.decisions.at(site).front();
  MutateCategorical mutator;
  Rng rng(2);
  std::set<int64_t> drawn;
  for (int run = 0; run < 200; ++run) {
    std::optional<Decisions> mutated =
        mutator.Apply(space, space.decisions, rng);
    ASSERT_TRUE(mutated.has_value());
    const int64_t value = mutated->at(site).front();
    EXPECT_NE(value, current);
    EXPECT_GE(value, 0);
    EXPECT_LT(value, 4);
    drawn.insert(value);
    for (const auto& [index, values] : space.decisions) {
      if (index != site) {
        EXPECT_EQ(mutated->at(index), values);
      }
    }
  }
  EXPECT_EQ(drawn.size(), 3u);  // every other candidate
}

TEST(MutateCategorical, DropsTheDecisionsThatDependOnTheRedrawnValue) {
  // A row tile drawn from {4, 8} splits i; the perfect tile of the outer
  // part depends on it, the tile of j does not.
  TracedSchedule sch(testing::MatmulProgram(), 1);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  ExprRV rows = sch.SampleCategorical({4, 8}, {0.5, 0.5}).value();
  std::vector<LoopRV> i = sch.Split(loops[0], {std::monostate{}, rows}).value();
  sch.SamplePerfectTile(i[0], 2, 1000).value();
  sch.SamplePerfectTile(loops[1], 2, 1000).value();
  const Trace space = sch.trace();
  ASSERT_EQ(space.decisions.size(), 3u);
  MutateCategorical mutator;
  Rng rng(1);
  std::optional<Decisions> mutated = mutator.Apply(space, space.decisions, rng);
  ASSERT_TRUE(mutated.has_value());
  EXPECT_NE(mutated->at(2), space.decisions.at(2));
  EXPECT_EQ(mutated->count(4), 0u);  // the tile of i's outer part: re-sampled
  EXPECT_EQ(mutated->at(5), space.decisions.at(5));  // j's tile: kept
  // And the point builds: the dropped decision is sampled afresh.
  EXPECT_TRUE(ReplayTrace(space, testing::MatmulProgram(), *mutated, 7).ok());
}

TEST(MutateCategorical, ZeroProbabilityIsNeverDrawn) {
  TracedSchedule sch(testing::MatmulProgram(), 1);
  sch.SampleCategorical({10, 20, 30}, {0.5, 0.5, 0.0}, 0).value();
  MutateCategorical mutator;
  Rng rng(3);
  for (int run = 0; run < 50; ++run) {
    std::optional<Decisions> mutated =
        mutator.Apply(sch.trace(), sch.trace().decisions, rng);
    ASSERT_TRUE(mutated.has_value());
    EXPECT_EQ(mutated->at(0).front(), 1);
  }
}

TEST(MutateCategorical, SingleCandidateCannotChange) {
  TracedSchedule sch(testing::MatmulProgram(), 1);
  sch.SampleCategorical({7}, {1.0}).value();
  MutateCategorical mutator;
  Rng rng(3);
  EXPECT_FALSE(
      mutator.Apply(sch.trace(), sch.trace().decisions, rng).has_value());
}

}  // namespace
}  // namespace lathe::tuner
