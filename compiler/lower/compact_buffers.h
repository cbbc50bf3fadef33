// CompactBuffers: moves each intermediate buffer to the loop where it is
// live and shrinks it to what one iteration of that loop touches.
//
// Runs on the lowered form (lower_blocks.h). For a buffer allocated by the
// root (an intermediate or a cache, any scope):
//  1. L is the innermost loop that contains every access (load or store).
//  2. L moves up while it, or a loop above it, carries an accumulation of the
//     buffer from one iteration to the next: a store whose value reads the
//     buffer (a reduction update) and whose written element can repeat
//     across iterations of that loop (a reduction loop; see
//     UpdateCarriedBy in the .cc; a loop bound to blockIdx or threadIdx
//     never carries one: bind proved its iterations disjoint). A fresh
//     allocation per iteration of such a loop would lose the partial sums.
//     Other values never flow between iterations of L: a producer moved
//     under a consumer's loop writes, in each iteration, everything the
//     consumer reads in it (compute_at's contract), and the property test
//     checks it in the interpreter, which reports a read of unwritten
//     storage.
//  3. The region of every access within one iteration of L: loops below L
//     vary over their ranges, L and the loops above are symbols. Per
//     dimension a box [min, min + extent) with a constant extent and a min
//     over the outer loops: SpanOfIndex and JoinSpans (arith/index_span.h),
//     which region inference (schedule/analysis/region.h) uses too. A
//     dimension whose box is not smaller than the buffer keeps its whole
//     range.
//  4. The buffer is re-allocated, with the box's shape, in an allocation
//     scope directly inside L's body, and every access becomes
//     index - min.
// Nothing is refused: a buffer with no common loop keeps its root
// allocation; one with an access that cannot be bounded (min/max/select/
// loads in an index, a product of loop variables) or a box no smaller than
// the buffer keeps its shape, and its root allocation when it is global, but
// moves whole into L when it is local or shared (the data-parallel analysis
// counts on that: loop_accesses.h, RootBuffersPrivateToIterations).
//
// Local-scope buffers must end up small (registers or stack). They do
// whenever they are computed at (or reverse-computed at) a loop that tiles
// them: cache_write "local" + reverse_compute_at under the tile gives a
// tile-shaped accumulator. They stay large when left at the root (no
// compute_at), when their consumers sit in other nests, or when the
// reduction loop is the outermost common loop; compacted.large_local in
// CompactStats counts them so a caller (code generation, the search) can
// refuse or penalize such candidates.
// Tests: tests/compiler/lower/compact_buffers_test.cc.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/ir/program.h"

namespace lathe {

struct CompactStats {
  std::vector<std::string> compacted;    // buffers moved and shrunk
  std::vector<std::string> kept;         // left at the root as they were
  std::vector<std::string> large_local;  // local-scope buffers over kLargeLocal
};

// Local buffers above this many elements are reported in large_local.
inline constexpr int64_t kLargeLocalElements = 4096;

// Errors: Internal when the program is not in lowered form.
absl::Status CompactBuffers(Program* program, CompactStats* stats = nullptr);

}  // namespace lathe
