// PackOperands: step 3 of MultiLevelTiling (multi_level_tiling.h): copy the
// operands that the register tile reads as vectors into panels in the order
// the tile reads them (docs/kernels.md, GotoBLAS packing: B as [N/NR][K][NR]).
//
// An operand is packed when it pays (PackLayoutFor):
//  - it is indexed by the vector variable, as a plain index of exactly one
//    dimension (a compound index such as conv's q + s cannot be packed by a
//    layout);
//  - another of its dimensions is indexed by a reduction variable, so the
//    tile reads it row after row across the reduction: unpacked, rows lie a
//    whole dimension apart (matmul's B[k, j]: 4 KiB apart at N = 1024, a new
//    page and cache set per k; dense's W[n, k] and conv's W[k, c, r, s]: not
//    even unit-stride in the vector variable);
//  - unless the operand is already one panel: its vector dimension is the
//    last and no longer than the panel.
// The broadcast operand (matmul's A, conv's input) is not packed: packing it
// did not make the hand-written matmul faster, and made it slower at 2048^3
// (bench/README.md, "Why the code is as it is").
// Layout: the vector dimension split by the panel width (the vector tile,
// or a divisor of the extent close to it), its outer part placed before the
// first dimension indexed by a reduction variable, its inner part last:
// B[K,N] -> [N/32][K][32], W[K,C,R,S] -> [K/32][C][R][S][32], dense's
// W[N,K] -> [N/32][K][32].
// Where: cache_read(global) then, when the operand is indexed by the outer
// variable and is not a layout-free input, compute_at the parallel outer loop
// (preserve_unit_loops), so each outer iteration packs the panel it reads and
// the inner levels reuse it (the hand-written matmul: B's panel per j block);
// otherwise at the root, once per call (the iterations of the parallel loop
// share it: compute_at under it would not be data-parallel). A layout-free
// input (Program::layout_free_inputs: a constant such as a model's weight) is
// always packed whole at the root, and its copy is marked
// kLayoutFreePackAnnotation (program.h): the pre-pack that
// compiler/codegen/prepack_split.h moves out of the call, to run once when
// the constant is known. A location fixed per branch rather
// than sample_compute_location: the number of loops of the copy, which
// get_loops records, depends on the location. The copy's inner loop is
// vectorized when the layout keeps the operand's last dimension last;
// otherwise the vector dimension's loop is split by the panel and its part
// within a panel moved innermost and vectorized, so that the copy stores in
// the panels' order (a copy left at the root then runs its outer loop in
// parallel). The copy is marked kPlacedAnnotation (block_nest.h) so
// RandomComputeLocation leaves it where it is (ParallelVectorizeUnroll may
// still parallelize a copy left at the root whose nest it can read).
// Tests: tests/tuner/space/pack_operand_test.cc.
#pragma once

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "compiler/ir/program.h"
#include "compiler/schedule/layout.h"
#include "compiler/schedule/traced_schedule.h"
#include "tuner/space/tiled_nest.h"

namespace lathe::tuner {

// The packing layout of `read` (an access of `block`) for `plan`, or nullopt
// when packing it does not pay (see above).
std::optional<Layout> PackLayoutFor(const BlockNode& block,
                                    const BufferAccess& read,
                                    const TilePlan& plan);

// The panel width for a vector variable of `extent`: the vector tile when it
// divides the extent, else the largest divisor of the extent between half a
// vector and the vector tile, else the whole extent when it is shorter than
// the tile, else the vector tile (the last panel padded).
int64_t PanelWidth(int64_t extent, const TilePlan& plan);

// Packs every operand of the tiled block that pays, after CacheWriteOutput.
// Errors: those of the primitives.
absl::Status PackOperands(TracedSchedule* schedule, const TiledNest& nest);

}  // namespace lathe::tuner
