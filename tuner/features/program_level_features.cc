#include "tuner/features/program_level_features.h"

#include <algorithm>
#include <cmath>

#include "tuner/features/arithmetic_features.h"
#include "tuner/features/feature_group.h"

namespace lathe::tuner {

const std::vector<std::string>& ProgramLevelFeatureNames() {
  static const auto* names = new std::vector<std::string>{
      "target.num_threads",
      "target.vector_lanes",
      "prog.stores",
      "prog.loops",
      "prog.loop_nests",
      "prog.max_depth",
      "prog.param_bytes",
      "prog.float_ops",
      "prog.intensity",
      "parallel.launches",
      "parallel.share",
      "parallel.thread_use",
      "parallel.balance",
      "parallel.tasks_per_thread",
      "vector.share",
      "vector.lane_use",
      "vector.length_over_lanes",
  };
  return *names;
}

void ExtractProgramLevelFeatures(const Program& lowered,
                                 const ProgramWalk& walk, const Target& target,
                                 float* out) {
  const double threads = std::max(1, target.num_threads);
  const double lanes = std::max(1, target.VectorLanesF32());
  double param_bytes = 0;
  for (const BufferPtr& b : lowered.Params()) {
    param_bytes += static_cast<double>(b->NumElements()) * b->dtype.bytes();
  }
  double max_depth = 0, float_ops = 0, weight = 0;
  double parallel_share = 0, thread_use = 0, balance = 0, tasks = 0;
  double vector_share = 0, lane_use = 0, vector_ratio = 0;
  for (const StoreContext& store : walk.stores) {
    max_depth = std::max(max_depth, static_cast<double>(store.loops.size()));
    float_ops += CountArithmetic(*store.store).FloatOps() * store.executions;
    double p = 1, v = 0;
    bool parallel = false;
    for (const LoopFrame& l : store.loops) {
      if (l.kind == ForKind::kParallel) {
        p *= static_cast<double>(l.extent);
        parallel = true;
      }
      if (l.kind == ForKind::kVectorized) v = static_cast<double>(l.extent);
    }
    const double w = store.executions;
    weight += w;
    parallel_share += w * (parallel ? 1 : 0);
    thread_use += w * std::min(p, threads) / threads;
    balance += w * p / (std::ceil(p / threads) * threads);
    tasks += w * p / threads;
    vector_share += w * (v > 0 ? 1 : 0);
    lane_use += w * (v > 0 ? v / (std::ceil(v / lanes) * lanes) : 1 / lanes);
    vector_ratio += w * v / lanes;
  }
  auto mean = [weight](double sum) { return weight > 0 ? sum / weight : 0; };
  const double values[] = {
      Log2p1(threads),
      Log2p1(lanes),
      Log2p1(static_cast<double>(walk.stores.size())),
      Log2p1(static_cast<double>(walk.num_loops)),
      Log2p1(static_cast<double>(walk.num_loop_nests)),
      Log2p1(max_depth),
      Log2p1(param_bytes),
      Log2p1(float_ops),
      Log2p1(param_bytes > 0 ? float_ops / param_bytes : 0),
      Log2p1(walk.parallel_launches),
      mean(parallel_share),
      mean(thread_use),
      mean(balance),
      Log2p1(mean(tasks)),
      mean(vector_share),
      mean(lane_use),
      Log2p1(mean(vector_ratio)),
  };
  for (size_t i = 0; i < sizeof(values) / sizeof(double); ++i) {
    out[i] = static_cast<float>(values[i]);
  }
}

}  // namespace lathe::tuner
