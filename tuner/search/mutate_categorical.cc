#include "tuner/search/mutate_categorical.h"

#include <vector>

namespace lathe::tuner {

std::optional<Decisions> MutateCategorical::Apply(const Trace& space, const Decisions& decisions,
                                                  Rng& rng) const {
  std::vector<int64_t> sites = SamplingInstructions(space, decisions, "sample_categorical");
  while (!sites.empty()) {
    const size_t pick = static_cast<size_t>(rng.UniformInt(static_cast<int64_t>(sites.size())));
    const int64_t index = sites[pick];
    sites.erase(sites.begin() + static_cast<std::ptrdiff_t>(pick));
    absl::StatusOr<std::vector<int64_t>> candidates =
        space.instructions[index].IntsAttr("candidates");
    if (!candidates.ok() || candidates->size() < 2) continue;
    std::vector<double> weights(candidates->size(), 1.0);
    if (absl::StatusOr<std::vector<double>> probs = space.instructions[index].FloatsAttr("probs");
        probs.ok() && probs->size() == candidates->size()) {
      weights = *probs;
    }
    const int64_t current = decisions.at(index).front();
    if (current >= 0 && current < static_cast<int64_t>(weights.size())) weights[current] = 0;
    double total = 0;
    for (double w : weights) total += w;
    if (total <= 0) continue;
    Decisions result = decisions;
    result[index] = {rng.Categorical(weights)};
    return result;
  }
  return std::nullopt;
}

}  // namespace lathe::tuner
