#include "tuner/search/mutator.h"

namespace lathe::tuner {

std::vector<int64_t> SamplingInstructions(const Trace& space,
                                          const Decisions& decisions,
                                          const std::string& kind) {
  std::vector<int64_t> found;
  for (const auto& [index, values] : decisions) {
    if (index >= 0 && index < static_cast<int64_t>(space.instructions.size()) &&
        space.instructions[index].kind == kind && !values.empty()) {
      found.push_back(index);
    }
  }
  return found;
}

}  // namespace lathe::tuner
