// cache_write: write a buffer through a cache.
//
// `block` (which must be the only writer of its write_index-th written buffer
// B) writes a new buffer B_<scope> instead, and a new block placed right after
// it copies the cache back into B. reverse_compute_at can then move the
// write-back under the loops of the tile, so a tile accumulates in the cache
// (registers, for scope local) and is stored once.
// Errors: write_index out of range, an unknown scope, a buffer with several
// writers.
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
absl::StatusOr<std::string> CacheWrite(Program* program, const std::string& block,
                                       int64_t write_index, BufferScope scope,
                                       const Layout& layout);

}  // namespace lathe::primitive
