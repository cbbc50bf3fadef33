#include "tuner/search/mutate_compute_location.h"

#include <gtest/gtest.h>

#include <set>

#include "compiler/ir/structural_equal.h"
#include "tests/tuner/search/mutator_test_space.h"

namespace lathe::tuner {
namespace {

TEST(MutateComputeLocation, MovesTheBlockSomewhereValidOftenEnough) {
  const Trace space = testing::SampleSpace(9);
  int64_t site = -1;
  for (size_t i = 0; i < space.instructions.size(); ++i) {
    if (space.instructions[i].kind == "sample_compute_location")
      site = static_cast<int64_t>(i);
  }
  ASSERT_GE(site, 0);
  const Program original =
      ReplayTrace(space, testing::MatmulProgram()).value()->program();
  MutateComputeLocation mutator;
  Rng rng(4);
  int valid = 0;
  std::set<std::string> programs;
  for (int run = 0; run < 60; ++run) {
    std::optional<Decisions> mutated =
        mutator.Apply(space, space.decisions, rng);
    ASSERT_TRUE(mutated.has_value());
    EXPECT_NE(mutated->at(site), space.decisions.at(site));
    EXPECT_GE(mutated->at(site).front(), -1);
    auto replayed = ReplayTrace(space, testing::MatmulProgram(), *mutated);
    if (!replayed.ok()) continue;  // a location that does not exist: rejected
    ++valid;
    programs.insert(StructuralHashHex((*replayed)->program()));
  }
  EXPECT_GT(valid, 10);
  // Different locations give different programs.
  EXPECT_GT(programs.size(), 1u);
}

TEST(MutateComputeLocation, NothingToMoveWithoutLocations) {
  TracedSchedule sch(testing::MatmulProgram());
  MutateComputeLocation mutator;
  Rng rng(1);
  EXPECT_FALSE(
      mutator.Apply(sch.trace(), sch.trace().decisions, rng).has_value());
}

}  // namespace
}  // namespace lathe::tuner
