// Allocation features: the buffers a program allocates (the root block's
// intermediates and the allocation scopes' caches), their sizes, where
// they live and how often they are allocated.
//
// Per store (aggregated over stores like the other per-store groups):
//   write_bytes            size of the written buffer when the program
//                          allocates it (a cache or an intermediate), else 0
//   write_allocations      how many times that buffer is allocated
//   stores_per_allocation  executions of the store per allocation (how long
//                          an accumulator lives), 0 when not allocated
//   read_bytes             total size of the allocated buffers it reads
// Whole program (one value each, scaled by log2(1 + x)):
//   count, total_bytes, max_bytes, local_bytes, global_bytes, shared_bytes,
//   executions (allocations performed), bytes_allocated (size times
//   executions), in_parallel (allocations under a parallel loop: per-thread
//   buffers), local_over_registers (the largest local buffer over the
//   target's vector register file: 32 registers with AVX-512, else 16).
// Tests: tests/tuner/features/allocation_features_test.cc.
#pragma once

#include <string>
#include <vector>

#include "compiler/target/target.h"
#include "tuner/features/feature_group.h"
#include "tuner/features/store_context.h"

namespace lathe::tuner {

const std::vector<StoreFeatureSpec>& AllocationStoreFeatureSpecs();
// Writes AllocationStoreFeatureSpecs().size() raw values.
void ExtractAllocationStoreFeatures(const ProgramWalk& walk,
                                    const StoreContext& store, double* out);

const std::vector<std::string>& AllocationProgramFeatureNames();
// Writes AllocationProgramFeatureNames().size() scaled values.
void ExtractAllocationProgramFeatures(const ProgramWalk& walk,
                                      const Target& target, float* out);

}  // namespace lathe::tuner
