// Reuse features of a store: how far apart the uses of the same data are,
// and how many bytes each cache level must bring in.
//
// Per slot (the written buffer and the read slots of
// buffer_access_features.h): the reuse-carrying loop is the innermost loop
// whose variable the buffer's indices do not use (its iterations revisit the
// same elements; MetaSchedule's "loop-multiple-read" reuse). Then
//   distance_iters  executions between two uses: the product of the extents
//                   of the loops inside the carrying loop
//   distance_bytes  bytes the store touches in between: the footprint in
//                   lines of all its buffers over the loops inside it
//   count           how many times each element is used: the product of the
//                   extents of every loop the indices do not use
// all 0 when every loop moves the access (no reuse).
//
// Cache levels: with capacity C, the data stays in the cache across the
// iterations of the outermost loop level whose footprint (all buffers of
// the store, in lines) fits in C; everything outside that level reloads it:
//   traffic = footprint(level) * iterations of the loops above the level.
// fit_depth is that level as a share of the depth (0: the whole nest fits).
// The capacities are fixed (32 KiB, 1 MiB, 32 MiB: typical of current x86
// and Arm server cores) because targets do not describe their caches.
//
// Arithmetic intensity: float ops per byte of footprint over the innermost
// 1, 2 and 3 loops and over the whole nest (TVM's intensity curve, sampled
// at loop levels).
// Tests: tests/tuner/features/reuse_features_test.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "tuner/features/feature_group.h"
#include "tuner/features/store_context.h"

namespace lathe::tuner {

struct CacheLevel {
  const char* name;
  double bytes;
};
inline constexpr CacheLevel kCacheLevels[] = {
    {"l1", 32.0 * 1024}, {"l2", 1024.0 * 1024}, {"l3", 32.0 * 1024 * 1024}};

const std::vector<StoreFeatureSpec>& ReuseFeatureSpecs();

// Writes ReuseFeatureSpecs().size() raw values.
void ExtractReuseFeatures(const StoreContext& store, double* out);

}  // namespace lathe::tuner
