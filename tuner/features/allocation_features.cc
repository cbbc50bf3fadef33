#include "tuner/features/allocation_features.h"

#include <algorithm>

namespace lathe::tuner {
namespace {

double Bytes(const Buffer& buffer) {
  return static_cast<double>(buffer.NumElements()) * buffer.dtype.bytes();
}

const AllocationSite* SiteOf(const ProgramWalk& walk, const Buffer* buffer) {
  for (const AllocationSite& site : walk.allocations) {
    if (site.buffer.get() == buffer) return &site;
  }
  return nullptr;
}

}  // namespace

const std::vector<StoreFeatureSpec>& AllocationStoreFeatureSpecs() {
  static const auto* specs = new std::vector<StoreFeatureSpec>{
      {"alloc.write_bytes", Aggregation::kIntensive},
      {"alloc.write_allocations", Aggregation::kExtensive},
      {"alloc.stores_per_allocation", Aggregation::kIntensive},
      {"alloc.read_bytes", Aggregation::kIntensive},
  };
  return *specs;
}

void ExtractAllocationStoreFeatures(const ProgramWalk& walk,
                                    const StoreContext& store, double* out) {
  out[0] = out[1] = out[2] = out[3] = 0;
  if (store.buffers.empty()) return;
  if (const AllocationSite* site =
          SiteOf(walk, store.buffers[0].buffer.get())) {
    out[0] = Bytes(*site->buffer);
    out[1] = site->executions;
    out[2] = site->executions > 0 ? store.executions / site->executions : 0;
  }
  for (size_t i = 1; i < store.buffers.size(); ++i) {
    if (const AllocationSite* site =
            SiteOf(walk, store.buffers[i].buffer.get())) {
      out[3] += Bytes(*site->buffer);
    }
  }
}

const std::vector<std::string>& AllocationProgramFeatureNames() {
  static const auto* names = new std::vector<std::string>{
      "alloc.count",        "alloc.total_bytes",
      "alloc.max_bytes",    "alloc.local_bytes",
      "alloc.global_bytes", "alloc.shared_bytes",
      "alloc.executions",   "alloc.bytes_allocated",
      "alloc.in_parallel",  "alloc.local_over_registers",
  };
  return *names;
}

void ExtractAllocationProgramFeatures(const ProgramWalk& walk,
                                      const Target& target, float* out) {
  double total = 0, max_bytes = 0, local = 0, global = 0, shared = 0;
  double executions = 0, allocated = 0, in_parallel = 0, max_local = 0;
  for (const AllocationSite& site : walk.allocations) {
    const double bytes = Bytes(*site.buffer);
    total += bytes;
    max_bytes = std::max(max_bytes, bytes);
    switch (site.buffer->scope) {
      case BufferScope::kLocal:
        local += bytes;
        max_local = std::max(max_local, bytes);
        break;
      case BufferScope::kGlobal:
        global += bytes;
        break;
      case BufferScope::kShared:
        shared += bytes;
        break;
    }
    executions += site.executions;
    allocated += bytes * site.executions;
    for (const LoopFrame& l : site.loops) {
      if (l.kind == ForKind::kParallel) {
        in_parallel += 1;
        break;
      }
    }
  }
  const int lanes = target.VectorLanesF32();
  const double register_file = (lanes >= 16 ? 32.0 : 16.0) * lanes * 4;
  const double values[] = {
      static_cast<double>(walk.allocations.size()),
      total,
      max_bytes,
      local,
      global,
      shared,
      executions,
      allocated,
      in_parallel,
      max_local / register_file,
  };
  for (size_t i = 0; i < 10; ++i)
    out[i] = static_cast<float>(Log2p1(values[i]));
}

}  // namespace lathe::tuner
