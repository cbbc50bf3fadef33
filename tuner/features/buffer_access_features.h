// Buffer access features of a store: for the buffer it writes and the two
// costliest buffers it reads (StoreContext::read_order), how many bytes and
// cache lines its executions move, how many of them are unique, the stride
// of the access, and where the buffer lives. Reads beyond the second are
// summed into other_read_*.
//
// Per slot ("buf.write.", "buf.read0.", "buf.read1."; an empty slot is all
// zeros):
//   bytes, lines           moved / touched over all executions
//   (access_geometry.h) unique_bytes, unique_lines   the footprint of the whole
//   nest stride                 elements, along the innermost loop that moves
//   it inner_contiguous       1 when the innermost loop moves it by one element
//   inner_broadcast        1 when the innermost loop does not move it
//   local                  1 for a local (register or stack) buffer
//   intermediate           1 for a buffer the program allocates
// and for the write slot, read_write: 1 when the store also reads what it
// writes (an accumulation).
// Tests: tests/tuner/features/buffer_access_features_test.cc.
#pragma once

#include <vector>

#include "tuner/features/feature_group.h"
#include "tuner/features/store_context.h"

namespace lathe::tuner {

// Read slots with features of their own.
inline constexpr int kReadSlots = 2;

const std::vector<StoreFeatureSpec>& BufferAccessFeatureSpecs();

// Writes BufferAccessFeatureSpecs().size() raw values.
void ExtractBufferAccessFeatures(const StoreContext& store, double* out);

}  // namespace lathe::tuner
