#include "tuner/features/loop_nest_features.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace lathe::tuner {

const std::vector<StoreFeatureSpec>& LoopNestFeatureSpecs() {
  static const auto* specs = [] {
    auto* out = new std::vector<StoreFeatureSpec>;
    for (const char* end : {"inner", "outer"}) {
      for (int p = 0; p < kNestPositions; ++p) {
        out->push_back({absl::StrCat("nest.", end, p, "_extent"),
                        Aggregation::kIntensive});
        out->push_back({absl::StrCat("nest.", end, p, "_spatial"),
                        Aggregation::kFraction});
      }
    }
    return out;
  }();
  return *specs;
}

void ExtractLoopNestFeatures(const StoreContext& store, double* out) {
  const std::vector<LoopFrame>& loops = store.loops;
  const int depth = static_cast<int>(loops.size());
  auto write = [&](int slot, int l) {
    if (l < 0 || l >= depth) {
      out[2 * slot] = 0;
      out[2 * slot + 1] = 0;
      return;
    }
    out[2 * slot] = static_cast<double>(loops[static_cast<size_t>(l)].extent);
    const bool spatial = !store.buffers.empty() &&
                         store.buffers[0].uses_loop[static_cast<size_t>(l)];
    out[2 * slot + 1] = spatial ? 1 : 0;
  };
  for (int p = 0; p < kNestPositions; ++p) write(p, depth - 1 - p);
  for (int p = 0; p < kNestPositions; ++p) write(kNestPositions + p, p);
}

}  // namespace lathe::tuner
