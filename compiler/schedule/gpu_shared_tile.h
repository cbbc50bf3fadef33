// The shared-memory tile of a GPU reduction (GEMM, batched GEMM, convolution
// as an implicit GEMM): the block structure both the default GPU schedule
// (fixed factors) and the GPU design space (sampled factors) build.
//
// For a reduction block whose loops are its own, with at least two spatial
// loops and a reduction: its reduction loops are fused into one when asked
// (a convolution's c, r, s as one k: fewer, longer chunks, but each index
// of the unrolled chunk a division and a modulo); then `choose` gives the
// factors, from the loops it is handed (so that a design space can sample
// them with SamplePerfectTile): for each spatial loop either none (the loop
// stays whole, a loop of blocks) or threads and registers, and the chunk
// of the first reduction loop. Each spatial loop with factors is split into
// [outer, threads, registers] (or [outer, groups, threads, registers]: see
// SharedTileAxis) and the first reduction loop into [chunks, chunk], ordered
// outers... chunks threads... chunk other-reductions... groups...
// registers... (the reduction loops keep their order: reorder does not
// reassociate a reduction); the outer loops fused and
// bound to blockIdx.x, the thread loops fused and bound to threadIdx.x; a
// local cache of the output (its element-wise consumers folded into it)
// written back after the chunks under the block loop by its own thread loop,
// the init decomposed out before them; each input read through a shared
// cache computed at the chunks loop (an input whose last index is the
// reduction transposed, so that a thread's register tile reads neighbouring
// elements), its innermost copy loop split by `lanes` and vectorized, the
// copy loops fused, split by the threads, the steps unrolled and the threads
// bound to threadIdx.x, and the element-wise stage that produces the input
// inlined into the copy when it calls no math function and the copy is its
// only reader (a convolution's padding: a guarded load of the copy rather
// than a kernel of its own; a math call would be repeated by every block
// that shares the tile); the chunk and register loops unrolled (the
// accumulators stay in registers).
//
// Factors are integers or a schedule's sampled values (Factor). With
// integer thread factors and `lanes`, a cache's copy is vectorized only
// where `lanes` divides its innermost loop and the steps divide by the
// threads (else one element a step), and a tile of more than
// kMaxSharedTileElements (or the caller's lower bound) is refused; with sampled
// factors the splits are always made, and a replay with decisions that do not
// fit (more threads than a tile has elements to copy, a width that does not
// divide) fails or is refused by the code generator's limits; a design space's
// sampler draws such a point again (SampleTrace in replay.h). Tests:
// tests/compiler/schedule/gpu_shared_tile_test.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/schedule/schedule.h"

namespace lathe {

// The elements of the shared tiles of one K chunk a fixed tile may hold:
// 32 KiB of float32, under the 48 KiB of static shared memory every target
// allows.
inline constexpr int64_t kMaxSharedTileElements = 8192;

// Threads and registers of one spatial loop. A thread's accumulators along
// the loop are `groups` runs of `registers` neighbours, one run of every
// thread apart: the loop is split into [outer, groups, threads, registers].
// With groups > 1, neighbouring threads read neighbouring runs of a shared
// tile (a warp's vector loads spread over all the banks instead of
// colliding two ways when each thread's run is 8 wide).
struct SharedTileAxis {
  Factor threads;
  Factor registers;
  Factor groups = int64_t{1};
};

struct SharedTileFactors {
  // One per spatial loop, outermost first; nullopt keeps a loop whole.
  std::vector<std::optional<SharedTileAxis>> axes;
  // The chunk of the first reduction loop (SharedTileLoops::reduce).
  Factor k_chunk;
  Factor lanes = int64_t{4};  // vector width of the copies to shared memory
};

// The loops `choose` gets: the spatial loops and the reduction loops (one
// when fused), outermost first, with their extents.
struct SharedTileLoops {
  std::vector<LoopRV> spatial;
  std::vector<int64_t> spatial_extents;
  std::vector<LoopRV> reduce;
  std::vector<int64_t> reduce_extents;
};

using ChooseSharedTile = std::function<absl::StatusOr<SharedTileFactors>(
    ConcreteSchedule*, const SharedTileLoops&)>;

// The indices of each distinct buffer that `block` reads, other than those
// it writes, in the order cache_read numbers them (first appearance).
std::vector<std::vector<Expr>> DistinctReadIndices(const BlockNode& block);

// A local cache of `block`'s output (a thread's accumulators), with the
// element-wise consumers that reverse_compute_inline accepts folded into
// its write-back (dense's bias and relu); returns the write-back block.
// The default GPU schedule's register tile and plain binding use it too.
absl::StatusOr<BlockRV> CacheOutputLocally(ConcreteSchedule* sch,
                                           BlockRV block);

// Applies the tile to block `name`. Fails at the first refused primitive,
// when the block has fewer than two spatial loops or no reduction, when
// `choose` fails or gives factors to fewer than two loops (or its `axes`
// does not have one entry per spatial loop), or when fixed factors give
// tiles of more than `max_shared_elements` (a target's shared memory may
// hold fewer than kMaxSharedTileElements).
absl::Status ApplySharedTile(
    ConcreteSchedule* sch, const std::string& name, bool fuse_reductions,
    const ChooseSharedTile& choose,
    int64_t max_shared_elements = kMaxSharedTileElements);

}  // namespace lathe
