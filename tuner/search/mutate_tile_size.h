// Moves a prime factor between two levels of a sampled perfect tile: the
// product (the loop's extent) is kept, so the result is a perfect tile too;
// the innermost level stays within the instruction's max_innermost.
// Tests: tests/tuner/search/mutate_tile_size_test.cc.
#pragma once

#include "tuner/search/mutator.h"

namespace lathe::tuner {

class MutateTileSize : public Mutator {
 public:
  std::string Name() const override { return "mutate_tile_size"; }
  std::optional<Decisions> Apply(const Trace& space, const Decisions& decisions,
                                 Rng& rng) const override;
};

}  // namespace lathe::tuner
