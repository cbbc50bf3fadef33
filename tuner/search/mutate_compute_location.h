// Moves a block sampled by sample_compute_location to another loop. The
// valid locations are only known while replaying (they depend on what came
// before), so the new decision is drawn near the current one (-1, "stay",
// included) and replay rejects a location that does not exist.
// Tests: tests/tuner/search/mutate_compute_location_test.cc.
#pragma once

#include "tuner/search/mutator.h"

namespace lathe::tuner {

class MutateComputeLocation : public Mutator {
 public:
  std::string Name() const override { return "mutate_compute_location"; }
  std::optional<Decisions> Apply(const Trace& space, const Decisions& decisions,
                                 Rng& rng) const override;
};

}  // namespace lathe::tuner
