// The geometry of a store's buffer accesses: which elements and cache lines
// each loop level touches, and how far each loop moves an index. The buffer
// access and reuse groups read it; store_context.cc computes it once per
// store during the walk.
//
// Footprints are bounding boxes (per dimension, the interval of each index
// over the loops inside a level, by BoundOf, clipped to the buffer's shape),
// unioned over the index tuples of a buffer. Lines are 64 bytes; a box's
// lines count its contiguous runs (trailing dimensions covered in full merge
// with the next one), each rounded up to whole lines as if aligned.
// Tests: tests/tuner/features/access_geometry_test.cc.
#pragma once

#include <cstdint>

#include "tuner/features/store_context.h"

namespace lathe::tuner {

inline constexpr int64_t kCacheLineBytes = 64;

// Fills the geometry fields of every BufferUse of `store` and its
// read_order. Expects store->loops and store->buffers to be set.
void ComputeAccessGeometry(StoreContext* store);

// Bytes that the store's executions move to or from the buffer: executions
// times accesses per execution times the element size.
double BytesAccessed(const StoreContext& store, const BufferUse& use);

// Cache lines that the store's executions touch one after another (not
// unique): each step of the innermost loop that moves the access touches a
// new line every 64 / (stride * element bytes) steps, and the loops inside
// it touch nothing new. 1 for an access that no loop moves.
double LinesAccessed(const StoreContext& store, const BufferUse& use);

// The stride (elements, absolute) of the access along the innermost loop
// that moves it; 0 when no loop does.
int64_t InnermostNonZeroStride(const BufferUse& use);

}  // namespace lathe::tuner
