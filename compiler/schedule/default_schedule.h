// The default schedule: a sensible, untuned schedule for any workload, used
// when no trace is given (`lathe compile`, `lathe bench`, `lathe lower
// --default`) and the baseline that tuning must beat.
//
// It is recorded through a TracedSchedule, so the result is a Trace that
// replays, serializes and is stored like any tuned schedule. It samples
// nothing: every factor is a constant computed from the loop extents and the
// options, so the same program and options give the same trace text.
//
// Strategy, generic over blocks (no per-operator cases):
//  1. Inline. Every non-reduction block that compute_inline accepts is folded
//     into its readers (bias add, pooling's padding), except a padding stage
//     whose elements a reader reuses across an iteration variable that does
//     not index them (conv2d's output channels): inlined, its select would
//     run K times per element and keep the inner loop from vectorizing
//     (bench/README.md, "Why the code is as it is"); the padded copy is
//     scheduled as a stage of its own. Then every remaining
//     non-reduction block that reverse_compute_inline accepts is folded into
//     its producer (a relu after an element-wise stage).
//  2. For each block left (in program order) whose loops are its own (one
//     loop per iteration variable, bound to it directly):
//     a. Tile the spatial loops. The vector loop is the innermost spatial
//        loop of extent >= 2; its inner factor is the vector width when it
//        divides the extent, the whole loop when the extent is below twice
//        the width (code generation splits the vector), else the largest
//        divisor <= width when it is at least half the width, else the width
//        with a tail (a predicate). Reduction blocks also register-block the
//        spatial loop before it (about options.register_block rows, chosen the
//        same way), so every broadcast feeds several vector FMAs. Other
//        spatial loops and the outer parts of the splits are the outer tile.
//        When no outer loop would have an extent >= 2, the register block
//        is given up so that something can run in parallel.
//     b. Reorder to S_outer... R... S_inner (docs/kernels.md): the
//        reductions run inside the outer tile, around the register tile.
//     c. For a reduction with an outer tile: cache_write(local), fold
//        element-wise consumers of the result into the write-back
//        (reverse_compute_inline: relu, the division of avg_pool), and move
//        the write-back under the outer tile (reverse_compute_at), so the tile
//        accumulates in registers and is stored once. This group is tried on
//        a scratch copy first and applied only when all of it fits: a cache
//        left at the root would be a full-size copy, slower than none.
//     d. decompose_reduction at the first reduction loop, so the init of the
//        tile leaves the reduction loop.
//     e. Unless options.num_threads == 1: fuse the outer loops and mark the
//        fused loop parallel (the outermost alone when fuse refuses).
//     f. Vectorize the vector loop, unroll the register-block loop; in the
//        init and write-back blocks under the tile, vectorize the innermost
//        loop and unroll the one above it.
//  Every step is tried and skipped when its primitive refuses (primitives
//  check their own preconditions, so what applies is correct); a failed call
//  leaves no trace. The function therefore does not fail on a valid
//  workload: at worst the trace is empty and the program untouched.
// Tests: tests/compiler/schedule/default_schedule_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"
#include "compiler/schedule/trace.h"

namespace lathe {

struct DefaultScheduleOptions {
  // Floats per vector register of the target (16 for AVX-512, 8 for AVX2, 4
  // for SSE): the caller reads it from the target; nothing is detected here.
  int64_t vector_width = 16;
  // Threads the kernel will run on; 0 means "unknown, possibly several".
  // With exactly 1, no loop is made parallel (nor fused for it).
  int64_t num_threads = 0;
  // Rows of the register tile of reductions (accumulators = rows x 1 vector):
  // 8 keeps 8 independent FMA chains in flight on two 4-cycle FMA pipes.
  int64_t register_block = 8;
};

// The default schedule of `initial` (a workload's initial program), as a
// trace; `trace.workload` is left empty for the caller to fill in. When
// `skipped` is not null, one line per step that a primitive refused is
// appended to it ("vectorize(j_1) of block C: <the primitive's message>"),
// for `lathe lower --default --show-trace` and for tests.
// Errors: InvalidArgument for a vector width or register block < 1 or a
// negative thread count. Refused primitives are not errors (see above).
absl::StatusOr<Trace> DefaultSchedule(
    const Program& initial, const DefaultScheduleOptions& options,
    std::vector<std::string>* skipped = nullptr);

}  // namespace lathe
