// The default GPU schedule: a correct, untuned CUDA schedule for any
// workload (registry operators and custom expressions), the GPU counterpart
// of default_schedule.h and the baseline GPU tuning must beat.
//
// Recorded through a TracedSchedule, so the result is a trace like any
// other; it samples nothing. Strategy, generic over blocks:
//  1. Inline every non-reduction block that compute_inline accepts into its
//     readers, then every one left that reverse_compute_inline accepts into
//     its producer (padding, bias, relu leave no stage of their own);
//     except a stage that calls no math function whose only reader will
//     get a shared-memory tile below (fixed or ranked): the tile folds it
//     into the copy of its input (a convolution's padding tested once per
//     element copied, not in every product).
//  2. For each block left whose loops are its own (one loop per iteration
//     variable), in program order (a stage kept for a shared tile last,
//     when the tile has not folded it), a cross-thread reduction, a
//     shared-memory tile, a register tile or a ranked shared-memory tile when
//     one fits (tried in that order), else the plain binding below. The
//     cross-thread reduction (at most 8192 outputs, one reduction loop of at
//     least 64 iterations, e.g. softmax's rows): the reduction loop is split by
//     d threads (a divisor in [32, options.threads_per_block], a multiple of 32
//     when one divides) and rfactor'ed into d partial results per output; the
//     outputs are fused and bound to blockIdx.x, the partials computed at that
//     loop with their d loop bound to threadIdx.x (so they land in shared
//     memory, a barrier before they are read), and the final reduction
//     accumulated in a register (thread 0 stores it). The shared-memory tile
//     (gpu_shared_tile.h with fixed factors: a reduction with at least two
//     spatial loops, the last two divisible by 16 threads times a register tile
//     r of {8, 4, 2}, r_i * r_j >= 16, and its reduction loops, fused, by a K
//     chunk of {16, 8, 4}; 256 threads at least): the two loops split into
//     [outer, 16, r] (or, for r = 8 and options.shared_tile_register_groups
//     2, [outer, 2, 16, 4]: the register tile in two runs, 64 apart), the
//     reduction into [chunks, chunk], ordered outer... chunks 16 16 chunk
//     (2 2) r r; the outer loops fused and bound to blockIdx.x
//     (a block of 16r_i x 16r_j outputs), the 16x16 thread loops fused and
//     bound to threadIdx.x; a local cache of the output, its write-back
//     moved after the chunks under the block loop with its own 16x16 thread
//     loop, the init decomposed out before them; each input read through a
//     shared cache computed at the chunk loop, its innermost copy loop split
//     by 4 (vectorized; not when 4 does not divide it or the tile is not
//     1024-divisible), the copy loops fused, split into [steps, 256], steps
//     unrolled, the 256 bound to threadIdx.x (every thread copies, then a
//     barrier,
//     then the products; at most 8192 elements of tiles); the chunk and
//     register loops unrolled. The accumulators, touched by three thread
//     loops, each thread its own r_i x r_j, are registers (cuda_codegen.h).
//     The register
//     tile (a reduction with at least two spatial loops): its last two spatial
//     loops are split into [outer, threads, registers] (threads from {16, 8, 4,
//     2} and registers from {4, 2} that divide them, at least 64 threads and 4
//     accumulators in all, at most options.threads_per_block threads), ordered
//     outer... threads threads reductions... registers registers; the outer
//     loops fused and bound to blockIdx.x, the thread loops fused and bound
//     to threadIdx.x; a local cache of the output moved under the thread
//     loop, the init decomposed out of the reduction, and every loop that
//     indexes the accumulators unrolled (so they stay in registers). The
//     ranked shared-memory tile (a convolution or GEMM at extents the two
//     tiles above do not divide, ResNet's 56, 28, 14 and 7): the best of
//     gpu_tile_choice.h's ranking (threads and registers along every
//     spatial loop, divisors of it, whole warps, a K chunk of the first
//     reduction loop) that gpu_shared_tile.h builds, of its first 16;
//     its reduction loops kept apart, its register tiles of 8 in runs of
//     4 as above. The plain binding:
//     a. reorder its spatial loops outside its reduction loops;
//     b. for a reduction, cache_write(local) so that each thread
//        accumulates in a register, its element-wise consumers folded into
//        the write-back;
//     c. fuse the spatial loops, split the fused loop by
//        options.threads_per_block (the whole loop when it is smaller; a
//        tail predicate when it does not divide), bind the outer part to
//        blockIdx.x and the inner part to threadIdx.x;
//     d. move the write-back under the threadIdx.x loop
//        (reverse_compute_at) and the init out of the reduction loops
//        (decompose_reduction).
//     Reductions run serially in each thread. Steps b and d are tried on a
//     scratch copy first and left out when any of them is refused; a block
//     for which step c is refused stays on one thread (correct, slow).
// Tests: tests/compiler/schedule/default_gpu_schedule_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"
#include "compiler/schedule/gpu_shared_tile.h"
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/trace.h"

namespace lathe {

struct DefaultGpuScheduleOptions {
  // Threads of a block for the fused spatial loops: at most the target's
  // max-threads-per-block.
  int64_t threads_per_block = 256;
  // The shared-memory tile's K chunk: 0 for the largest of {16, 8, 4} that
  // divides the reduction; else this value, when it divides the reduction
  // and the tiles fit.
  int64_t shared_tile_k_chunk = 0;
  // The largest register tile per axis the shared-memory tile tries, of
  // {8, 4, 2}.
  int64_t shared_tile_max_registers = 8;
  // The shared-memory tile's register groups per axis (SharedTileAxis), 1
  // or 2: with 2, an axis's register tile of 8 is 2 runs of 4, one run of
  // each of the 16 threads apart (a warp's float4 reads of a tile row then
  // fall in distinct banks); smaller register tiles stay whole.
  int64_t shared_tile_register_groups = 2;
  // The ranked shared-memory tile tried first, by rank (0: the best;
  // lathe-gpu-check's --conv-variants times the others); -1 leaves the
  // ranked tile out (such a reduction gets the plain binding).
  int64_t ranked_tile = 0;
  // The elements (float32) a block's shared tiles may hold: the target's
  // shared memory per block when it allows fewer than
  // kMaxSharedTileElements (a tile past it is passed over for the next
  // strategy or ranked tile).
  int64_t max_shared_elements = kMaxSharedTileElements;
  // False: no tile and no cross-thread reduction, every block the plain
  // binding (one register per thread, no shared memory): what a target
  // whose limits refuse the tiles gets (cuda::DefaultCudaTrace).
  bool tiles = true;
};

// The options for a GPU that allows a block `max_threads_per_block`
// threads and `max_shared_memory_bytes` of shared memory (a cuda target's
// GpuLimits, which this layer does not see): threads per block at most
// the former, shared tiles within the latter in float32 elements (the
// only element type CUDA C is generated for). What every caller that
// schedules for a target starts from (the CUDA back end's default, the
// GPU design space, lathe-gpu-check).
DefaultGpuScheduleOptions DefaultGpuScheduleOptionsFor(
    int64_t max_threads_per_block, int64_t max_shared_memory_bytes);

// The default GPU schedule of `initial`, as a trace (`trace.workload` left
// empty). `skipped`, when not null, gets one line per refused step.
// Errors: InvalidArgument for threads_per_block < 1, a negative K chunk,
// max registers not one of 2, 4, 8, register groups not 1 or 2, a
// ranked tile below -1 or max shared elements below 1.
absl::StatusOr<Trace> DefaultGpuSchedule(
    const Program& initial, const DefaultGpuScheduleOptions& options,
    std::vector<std::string>* skipped = nullptr);

// What the GPU design space samples in step 2 instead of fixing it (so
// that the search tunes it), each with equal probabilities:
// - the plain binding's threads per block (sample_categorical): the powers
//   of two in [32, max_threads] smaller than the fused loop, and the loop's
//   extent when it is at most max_threads (one block; nothing to sample
//   when the loop has 32 iterations or fewer), a tail predicate where one
//   does not divide it; for a local accumulation only those that divide
//   it (its write-back cannot sit under a predicated thread loop);
// - the cross-thread reduction's threads (sample_categorical): the
//   reduction's divisors in [32, max_threads], the multiples of 32 when
//   there are any;
// - the unroll depth of a thread's serial reduction (the plain binding's
//   local accumulation): its innermost reduction loop split by
//   sample_perfect_tile, the inner part (at most 16 iterations) unrolled.
// A single candidate is used as it is, without a sample.
struct GpuBlockSampling {
  int64_t max_threads = 1024;  // the target's max-threads-per-block
};

// Step 2 for one block of `sch`: the first strategy that applies, each tried
// on a scratch copy first. Whether the block was scheduled; false leaves the
// schedule as it was (a block whose loops are not its own, or every
// strategy refused: one line each in `skipped`). The GPU design space
// (tuner/space/gpu_bind_block.h) uses it for the blocks it does not tile,
// with `sampling`; null: the default schedule's fixed choices.
bool ScheduleGpuBlock(ConcreteSchedule* sch, const std::string& name,
                      const DefaultGpuScheduleOptions& options,
                      std::vector<std::string>* skipped = nullptr,
                      const GpuBlockSampling* sampling = nullptr);

}  // namespace lathe
