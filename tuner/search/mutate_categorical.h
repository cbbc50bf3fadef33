// Redraws one sampled categorical (an unroll depth, a parallel extent, a loop
// order, a branch choice) among the candidates other than the current one,
// by the instruction's probabilities. Later sampling decisions that depend
// on the redrawn value (a tile of a loop split by it) are dropped, to be
// sampled afresh when the point is built.
// Tests: tests/tuner/search/mutate_categorical_test.cc.
#pragma once

#include "tuner/search/mutator.h"

namespace lathe::tuner {

class MutateCategorical : public Mutator {
 public:
  std::string Name() const override { return "mutate_categorical"; }
  std::optional<Decisions> Apply(const Trace& space, const Decisions& decisions,
                                 Rng& rng) const override;
};

}  // namespace lathe::tuner
