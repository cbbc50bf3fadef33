// GPU features (gpu_features.h).
#include "tuner/features/gpu_features.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "tuner/features/feature_group.h"

namespace lathe::tuner {
namespace {

struct Kernel {
  double work = 0;
  std::map<std::string, int64_t> extents;  // per bound axis, the largest
  double shared_bytes = 0;
  double local_elements = 0;
  double unrolled_stores = 0;
};

// The kernel a nest belongs to: its outermost loop (nullptr for a store
// outside every loop, a kernel of its own).
const ForNode* KernelOf(const std::vector<LoopFrame>& loops) {
  return loops.empty() ? nullptr : loops.front().loop;
}

int64_t Product(const Kernel& k, const char* prefix) {
  int64_t product = 1;
  for (const auto& [axis, extent] : k.extents) {
    if (axis.rfind(prefix, 0) == 0) product *= extent;
  }
  return product;
}

}  // namespace

const std::vector<std::string>& GpuFeatureNames() {
  static const auto* names = new std::vector<std::string>{
      "gpu.kernels",   "gpu.threads",        "gpu.blocks",
      "gpu.warp_use",  "gpu.shared_bytes",   "gpu.local_elements",
      "gpu.occupancy", "gpu.unrolled_stores"};
  return *names;
}

void ExtractGpuFeatures(const ProgramWalk& walk, const Target& target,
                        float* out) {
  std::fill(out, out + GpuFeatureNames().size(), 0.0f);
  if (!target.IsCuda()) return;
  std::map<const ForNode*, Kernel> kernels;
  for (const StoreContext& store : walk.stores) {
    Kernel& k = kernels[KernelOf(store.loops)];
    k.work += store.executions;
    double unrolled = 1;
    for (const LoopFrame& frame : store.loops) {
      if (frame.kind == ForKind::kThreadBinding) {
        int64_t& extent = k.extents[frame.loop->thread_tag];
        extent = std::max(extent, frame.extent);
      }
      if (frame.kind == ForKind::kUnrolled ||
          frame.kind == ForKind::kVectorized) {
        unrolled *= static_cast<double>(frame.extent);
      }
    }
    k.unrolled_stores += unrolled;
  }
  for (const AllocationSite& site : walk.allocations) {
    if (site.loops.empty()) continue;  // the root's: device buffers
    auto it = kernels.find(KernelOf(site.loops));
    if (it == kernels.end()) continue;
    const double elements = static_cast<double>(site.buffer->NumElements());
    if (site.buffer->scope == BufferScope::kShared) {
      it->second.shared_bytes += elements * site.buffer->dtype.bytes();
    } else if (site.buffer->scope == BufferScope::kLocal) {
      // Allocated outside the thread loops, a tile's accumulators are
      // shared out among the block's threads (cuda_codegen.h).
      bool in_thread = false;
      for (const LoopFrame& frame : site.loops) {
        in_thread |= frame.kind == ForKind::kThreadBinding &&
                     frame.loop->thread_tag.rfind("threadIdx", 0) == 0;
      }
      it->second.local_elements +=
          in_thread ? elements
                    : elements / static_cast<double>(std::max<int64_t>(
                                     1, Product(it->second, "threadIdx")));
    }
  }
  if (kernels.empty()) return;
  const Kernel* heaviest = &kernels.begin()->second;
  for (const auto& [loop, k] : kernels) {
    if (k.work > heaviest->work) heaviest = &k;
  }
  const GpuLimits& limits = target.gpu;
  const double threads = static_cast<double>(Product(*heaviest, "threadIdx"));
  const double blocks = static_cast<double>(Product(*heaviest, "blockIdx"));
  const double warp = std::max(1, limits.warp_size);
  const double warp_use = threads / (std::ceil(threads / warp) * warp);
  // Blocks resident on one multiprocessor, by each of its limits.
  const double max_threads = 2.0 * std::max(1, limits.max_threads_per_block);
  double resident = std::floor(max_threads / threads);
  if (heaviest->shared_bytes > 0) {
    resident =
        std::min(resident, std::floor(4.0 * limits.max_shared_memory_per_block /
                                      heaviest->shared_bytes));
  }
  const double registers = threads * (32 + heaviest->local_elements);
  resident =
      std::min(resident, std::floor(limits.registers_per_block / registers));
  const double occupancy =
      std::clamp(resident * threads / max_threads, 0.0, 1.0);
  const double values[] = {Log2p1(static_cast<double>(kernels.size())),
                           Log2p1(threads),
                           Log2p1(blocks),
                           warp_use,
                           Log2p1(heaviest->shared_bytes),
                           Log2p1(heaviest->local_elements),
                           occupancy,
                           Log2p1(heaviest->unrolled_stores)};
  for (size_t i = 0; i < GpuFeatureNames().size(); ++i)
    out[i] = static_cast<float>(values[i]);
}

}  // namespace lathe::tuner
