// Mutators: how the evolutionary search moves from a candidate to a
// neighbour. A mutator changes the decision of one sampling instruction of a
// design space's trace; the mutated candidate is then validated by replaying
// it (an invalid one is dropped before it is measured).
// Each mutator is its own file with its own test (tests/tuner/search/).
#pragma once

#include <optional>
#include <string>

#include "compiler/schedule/random.h"
#include "compiler/schedule/replay.h"
#include "compiler/schedule/trace.h"

namespace lathe::tuner {

class Mutator {
 public:
  virtual ~Mutator() = default;
  virtual std::string Name() const = 0;
  // New decisions for `space` differing from `decisions` (complete: one per
  // sampling instruction) in one place; nullopt when the mutator finds
  // nothing to change (e.g. the space has no instruction of its kind).
  virtual std::optional<Decisions> Apply(const Trace& space,
                                         const Decisions& decisions,
                                         Rng& rng) const = 0;
};

// The indices of `space`'s instructions of `kind` that have a decision.
std::vector<int64_t> SamplingInstructions(const Trace& space,
                                          const Decisions& decisions,
                                          const std::string& kind);

}  // namespace lathe::tuner
