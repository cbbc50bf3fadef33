#include "tuner/search/mutate_categorical.h"

#include <set>
#include <vector>

namespace lathe::tuner {
namespace {

// The decisions of later sampling instructions that depend on the value
// drawn at `index` (through the loops a split by it made, for instance) no
// longer fit: a perfect tile of a loop whose extent changed. They are
// dropped, so replay samples them afresh, instead of making every such
// mutation invalid.
void DropDependentDecisions(const Trace& space, int64_t index,
                            Decisions& decisions) {
  std::set<int64_t> tainted(space.instructions[index].outputs.begin(),
                            space.instructions[index].outputs.end());
  for (size_t i = static_cast<size_t>(index) + 1; i < space.instructions.size();
       ++i) {
    const Instruction& inst = space.instructions[i];
    bool depends = false;
    for (const TraceInput& input : inst.inputs) {
      if (input.kind == TraceInput::Kind::kRV && tainted.count(input.value))
        depends = true;
    }
    if (!depends) continue;
    tainted.insert(inst.outputs.begin(), inst.outputs.end());
    decisions.erase(static_cast<int64_t>(i));
  }
}

}  // namespace

std::optional<Decisions> MutateCategorical::Apply(const Trace& space,
                                                  const Decisions& decisions,
                                                  Rng& rng) const {
  std::vector<int64_t> sites =
      SamplingInstructions(space, decisions, "sample_categorical");
  while (!sites.empty()) {
    const size_t pick =
        static_cast<size_t>(rng.UniformInt(static_cast<int64_t>(sites.size())));
    const int64_t index = sites[pick];
    sites.erase(sites.begin() + static_cast<std::ptrdiff_t>(pick));
    absl::StatusOr<std::vector<int64_t>> candidates =
        space.instructions[index].IntsAttr("candidates");
    if (!candidates.ok() || candidates->size() < 2) continue;
    std::vector<double> weights(candidates->size(), 1.0);
    if (absl::StatusOr<std::vector<double>> probs =
            space.instructions[index].FloatsAttr("probs");
        probs.ok() && probs->size() == candidates->size()) {
      weights = *probs;
    }
    const int64_t current = decisions.at(index).front();
    if (current >= 0 && current < static_cast<int64_t>(weights.size()))
      weights[current] = 0;
    double total = 0;
    for (double w : weights) total += w;
    if (total <= 0) continue;
    Decisions result = decisions;
    result[index] = {rng.Categorical(weights)};
    DropDependentDecisions(space, index, result);
    return result;
  }
  return std::nullopt;
}

}  // namespace lathe::tuner
