#include "tuner/search/mutate_compute_location.h"

#include <algorithm>
#include <vector>

namespace lathe::tuner {
namespace {
// How far from the current location a new one is drawn.
constexpr int64_t kReach = 4;
}  // namespace

std::optional<Decisions> MutateComputeLocation::Apply(
    const Trace& space, const Decisions& decisions, Rng& rng) const {
  std::vector<int64_t> sites =
      SamplingInstructions(space, decisions, "sample_compute_location");
  if (sites.empty()) return std::nullopt;
  const int64_t index = sites[static_cast<size_t>(
      rng.UniformInt(static_cast<int64_t>(sites.size())))];
  const int64_t current = decisions.at(index).front();
  std::vector<int64_t> choices;
  for (int64_t d = std::max<int64_t>(-1, current - kReach);
       d <= current + kReach; ++d) {
    if (d != current) choices.push_back(d);
  }
  Decisions result = decisions;
  result[index] = {choices[static_cast<size_t>(
      rng.UniformInt(static_cast<int64_t>(choices.size())))]};
  return result;
}

}  // namespace lathe::tuner
