// cache_write: write a buffer through a cache.
//
// `block` (which must be the only writer of its write_index-th written buffer
// B) writes, and reads back, a new buffer B_<scope> (same shape, or the shape
// of `layout`) allocated by the root block, and a new block named like the
// cache (e.g. "C_local", under new loops "ax0", "ax1", ...) placed at the
// root right after the top-level statement containing `block` copies the
// cache back into B. reverse_compute_at can then move the write-back under
// the loops of the tile, so a tile accumulates in the cache (registers, for
// scope local) and is stored once.
//
// Write order: the distinct buffers in order of first appearance in
// AccessesOf(block).writes (the init's stores first).
//
// Preconditions, each a FailedPrecondition when it fails:
// - B is not a program input, and no other block writes B;
// - `block` is at the root scope, and no other block in its top-level
//   statement reads B (it would read B before the write-back);
// - `block` writes B at its spatial iteration variables, each dimension
//   indexed by a distinct variable whose extent is that dimension's (so the
//   write-back copies only elements the block wrote).
// Errors: InvalidArgument for an unknown block, write_index out of range, or
// a layout that does not fit B's rank (the scope is parsed by the caller).
// Tests: tests/compiler/schedule/primitive/cache_write_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"
#include "compiler/schedule/layout.h"

namespace lathe::primitive {

// Returns the name of the new write-back block.
absl::StatusOr<std::string> CacheWrite(Program* program,
                                       const std::string& block,
                                       int64_t write_index, BufferScope scope,
                                       const Layout& layout);

}  // namespace lathe::primitive
