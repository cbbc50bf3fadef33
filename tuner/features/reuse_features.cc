#include "tuner/features/reuse_features.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tuner/features/access_geometry.h"
#include "tuner/features/arithmetic_features.h"
#include "tuner/features/buffer_access_features.h"

namespace lathe::tuner {
namespace {

constexpr int kIntensityLevels = 3;  // innermost 1, 2, 3 loops (then the nest)

// Bytes of the store's footprint at depth d, in whole lines.
double FootprintBytes(const StoreContext& store, size_t d) {
  double lines = 0;
  for (const BufferUse& use : store.buffers) lines += use.footprint_lines[d];
  return lines * kCacheLineBytes;
}

void SlotReuse(const StoreContext& store, const BufferUse* use, double* out) {
  out[0] = out[1] = out[2] = 0;
  if (use == nullptr) return;
  const size_t n = store.loops.size();
  double count = 1;
  bool carried = false;
  size_t carrier = 0;
  for (size_t l = 0; l < n; ++l) {
    if (use->uses_loop[l]) continue;
    count *= static_cast<double>(store.loops[l].extent);
    carried = true;
    carrier = l;  // the last one seen is the innermost
  }
  if (!carried) return;
  double inner = 1;
  for (size_t l = carrier + 1; l < n; ++l)
    inner *= static_cast<double>(store.loops[l].extent);
  out[0] = inner;
  out[1] = FootprintBytes(store, carrier + 1);
  out[2] = count;
}

}  // namespace

const std::vector<StoreFeatureSpec>& ReuseFeatureSpecs() {
  static const auto* specs = [] {
    auto* s = new std::vector<StoreFeatureSpec>;
    for (const CacheLevel& level : kCacheLevels) {
      s->push_back({absl::StrCat("reuse.", level.name, "_traffic_bytes"),
                    Aggregation::kExtensive});
      s->push_back({absl::StrCat("reuse.", level.name, "_fit_depth"),
                    Aggregation::kFraction});
    }
    std::vector<std::string> slots = {"write"};
    for (int r = 0; r < kReadSlots; ++r)
      slots.push_back(absl::StrCat("read", r));
    for (const std::string& slot : slots) {
      s->push_back({absl::StrCat("reuse.", slot, ".distance_iters"),
                    Aggregation::kIntensive});
      s->push_back({absl::StrCat("reuse.", slot, ".distance_bytes"),
                    Aggregation::kIntensive});
      s->push_back(
          {absl::StrCat("reuse.", slot, ".count"), Aggregation::kIntensive});
    }
    for (int k = 1; k <= kIntensityLevels; ++k) {
      s->push_back(
          {absl::StrCat("reuse.intensity_inner", k), Aggregation::kIntensive});
    }
    s->push_back({"reuse.intensity_nest", Aggregation::kIntensive});
    return s;
  }();
  return *specs;
}

void ExtractReuseFeatures(const StoreContext& store, double* out) {
  const size_t n = store.loops.size();
  // 1. Cache levels. The footprint shrinks (weakly) with depth, so the
  //    outermost level that fits is the first one from the outside.
  for (const CacheLevel& level : kCacheLevels) {
    size_t fit = n;
    for (size_t d = 0; d <= n; ++d) {
      if (FootprintBytes(store, d) <= level.bytes) {
        fit = d;
        break;
      }
    }
    double outer = 1;
    for (size_t l = 0; l < fit; ++l)
      outer *= static_cast<double>(store.loops[l].extent);
    *out++ = FootprintBytes(store, fit) * outer;
    *out++ = n == 0 ? 0 : static_cast<double>(fit) / static_cast<double>(n);
  }
  // 2. Reuse per slot.
  SlotReuse(store, store.buffers.empty() ? nullptr : &store.buffers[0], out);
  out += 3;
  for (int r = 0; r < kReadSlots; ++r) {
    const BufferUse* use = r < static_cast<int>(store.read_order.size())
                               ? &store.buffers[store.read_order[r]]
                               : nullptr;
    SlotReuse(store, use, out);
    out += 3;
  }
  // 3. Intensity at loop levels.
  const double flops = CountArithmetic(*store.store).FloatOps();
  auto intensity = [&](size_t d) {
    double iterations = 1;
    for (size_t l = d; l < n; ++l)
      iterations *= static_cast<double>(store.loops[l].extent);
    return flops * iterations / FootprintBytes(store, d);
  };
  for (int k = 1; k <= kIntensityLevels; ++k) {
    *out++ = intensity(n >= static_cast<size_t>(k) ? n - k : 0);
  }
  *out++ = intensity(0);
}

}  // namespace lathe::tuner
