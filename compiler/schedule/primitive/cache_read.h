// cache_read: read a buffer through a cache (and pack it).
//
// For the read_index-th distinct buffer B that `block` reads, a new block
// copies B into a new buffer B_<scope> (same shape, or the shape of
// `layout`), allocated by the root block; `block` then reads the cache at the
// mapped indices (LayoutIndices). Other readers of B are unchanged.
// compute_at can then move the copy next to its reader, so it copies only the
// region one iteration needs.
//
// Read order: the distinct buffers in order of first appearance in
// AccessesOf(block).reads (the init, then the body, each in evaluation
// order), leaving out buffers the block also writes (the accumulator C of
// C = C + A * B is not a read for cache_read). For the matmul C = C + A * B,
// index 0 is A and index 1 is B.
//
// Placement: the copy block (named like the cache, e.g. "B_global", under
// new loops "ax0", "ax1", ...) sits at the root, right before the top-level
// statement that contains `block`; the whole of B is copied there, so B must
// be complete at that point: no block inside that statement may write B.
// With a split layout, the padding elements of the cache (those that
// correspond to no element of B) are never written, and never read: `block`
// reads only the images of valid elements of B.
//
// Errors: InvalidArgument for an unknown block, read_index out of range, or
// a layout that does not fit B's rank (the scope is parsed by the caller);
// FailedPrecondition when `block` is not at the root scope or B is written
// inside the statement that contains `block`.
// Tests: tests/compiler/schedule/primitive/cache_read_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"
#include "compiler/schedule/layout.h"

namespace lathe::primitive {

// Returns the name of the new copy block.
absl::StatusOr<std::string> CacheRead(Program* program,
                                      const std::string& block,
                                      int64_t read_index, BufferScope scope,
                                      const Layout& layout);

}  // namespace lathe::primitive
