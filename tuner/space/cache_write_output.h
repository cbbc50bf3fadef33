// CacheWriteOutput: step 2 of MultiLevelTiling (multi_level_tiling.h): the
// output tile of a tiled block accumulates in a local cache (registers) and
// is stored once, after the reduction (docs/kernels.md: "no load or store of C
// inside the K loop").
//
//  1. cache_write(block, 0, "local"), with the layout of OutputCacheLayout:
//     when the vector variable does not index the output's last dimension
//     (conv2d_nchw vectorized over channels), the cache has that dimension
//     last, so the accumulator's vectors are unit-stride.
//  2. Element-wise consumers of the output (dense's bias and relu, when the
//     inline rule left them as one stage) are folded into the write-back by
//     reverse_compute_inline when the primitive accepts them; the others
//     stay stages of their own.
//  3. reverse_compute_at(write-back, last loop of the middle level,
//     preserve_unit_loops): the tile of the inner and register levels is
//     accumulated across the whole reduction and written back once.
//     Preserving unit loops keeps the number of loops of the write-back
//     independent of the tile sizes, so its get_loops replays with any
//     decisions (remove_no_ops drops the unit loops when lowering).
//  4. decompose_reduction at the first reduction loop: the tile's init
//     leaves the reduction; its copy of the vector loop is vectorized and of
//     the row loop unrolled.
//  5. The write-back: without a layout, its last loop (the vector
//     dimension) vectorized and the row dimension's loop unrolled; with one,
//     the vector and row dimensions' loops moved innermost (reorder) and
//     unrolled (the stores are strided in the vector variable: the
//     hand-written conv2d schedule does this).
// Tests: tests/tuner/space/cache_write_output_test.cc.
#pragma once

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"
#include "compiler/schedule/layout.h"
#include "compiler/schedule/traced_schedule.h"
#include "tuner/space/tiled_nest.h"

namespace lathe::tuner {

// The layout of the output cache for `plan` on `block` (which writes one
// buffer at its iteration variables): empty unless plan.transposed_output;
// then no split and the permutation that moves the vector variable's
// dimension last, the others in order (Y[N,K,P,Q] -> [N,P,Q,K]).
Layout OutputCacheLayout(const BlockNode& block, const TilePlan& plan);

// The write-back and init blocks CacheWriteOutput made.
struct OutputCache {
  BlockRV write_back;
  BlockRV init;
};

// Steps 1-5 on a nest tiled by TileBlock. Errors: those of the primitives.
absl::StatusOr<OutputCache> CacheWriteOutput(TracedSchedule* schedule,
                                             const TiledNest& nest);

}  // namespace lathe::tuner
