#include "tuner/features/loop_features.h"

#include <algorithm>
#include <variant>

namespace lathe::tuner {

const std::vector<StoreFeatureSpec>& LoopFeatureSpecs() {
  static const auto* specs = new std::vector<StoreFeatureSpec>{
      {"loop.depth", Aggregation::kIntensive},
      {"loop.executions", Aggregation::kExtensive},
      {"loop.guards", Aggregation::kIntensive},
      {"loop.guard_fraction", Aggregation::kFraction},
      {"loop.innermost_extent", Aggregation::kIntensive},
      {"loop.vector_length", Aggregation::kIntensive},
      {"loop.vector_product", Aggregation::kIntensive},
      {"loop.vector_innermost", Aggregation::kFraction},
      {"loop.parallel_product", Aggregation::kIntensive},
      {"loop.parallel_count", Aggregation::kIntensive},
      {"loop.parallel_outermost", Aggregation::kFraction},
      {"loop.parallel_grain", Aggregation::kIntensive},
      {"loop.unroll_product", Aggregation::kIntensive},
      {"loop.unroll_count", Aggregation::kIntensive},
      {"loop.auto_unroll_max_step", Aggregation::kIntensive},
      {"loop.thread_product", Aggregation::kIntensive},
      {"loop.serial_product", Aggregation::kIntensive},
      {"loop.annotated", Aggregation::kIntensive},
      {"loop.write_invariant_product", Aggregation::kIntensive},
  };
  return *specs;
}

void ExtractLoopFeatures(const StoreContext& store, double* out) {
  const std::vector<LoopFrame>& loops = store.loops;
  double vector_length = 0, vector_product = 1, parallel_product = 1;
  double parallel_count = 0, unroll_product = 1, unroll_count = 0;
  double auto_unroll = 0, thread_product = 1, serial_product = 1;
  double annotated = 0, write_invariant = 1;
  for (size_t l = 0; l < loops.size(); ++l) {
    const double extent = static_cast<double>(loops[l].extent);
    switch (loops[l].kind) {
      case ForKind::kVectorized:
        vector_length = extent;  // the innermost one wins
        vector_product *= extent;
        break;
      case ForKind::kParallel:
        parallel_product *= extent;
        parallel_count += 1;
        break;
      case ForKind::kUnrolled:
        unroll_product *= extent;
        unroll_count += 1;
        break;
      case ForKind::kThreadBinding:
        thread_product *= extent;
        break;
      case ForKind::kSerial:
        serial_product *= extent;
        break;
    }
    const Annotations& annotations = loops[l].loop->annotations;
    if (!annotations.empty()) annotated += 1;
    auto it = annotations.find(kAutoUnrollMaxStep);
    if (it != annotations.end() &&
        std::holds_alternative<int64_t>(it->second)) {
      auto_unroll = std::max(
          auto_unroll, static_cast<double>(std::get<int64_t>(it->second)));
    }
    if (!store.buffers.empty() && !store.buffers[0].uses_loop[l])
      write_invariant *= extent;
  }
  const bool any = !loops.empty();
  out[0] = static_cast<double>(loops.size());
  out[1] = store.executions;
  out[2] = static_cast<double>(store.guards.size());
  out[3] = store.guard_fraction;
  out[4] = any ? static_cast<double>(loops.back().extent) : 0;
  out[5] = vector_length;
  out[6] = vector_product;
  out[7] = any && loops.back().kind == ForKind::kVectorized ? 1 : 0;
  out[8] = parallel_product;
  out[9] = parallel_count;
  out[10] = any && loops.front().kind == ForKind::kParallel ? 1 : 0;
  out[11] = store.executions / parallel_product;
  out[12] = unroll_product;
  out[13] = unroll_count;
  out[14] = auto_unroll;
  out[15] = thread_product;
  out[16] = serial_product;
  out[17] = annotated;
  out[18] = write_invariant;
}

}  // namespace lathe::tuner
