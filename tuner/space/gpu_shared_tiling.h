// GpuSharedTiling: the schedule rule that gives a GPU reduction with two
// spatial loops (GEMM, batched GEMM, a convolution as an implicit GEMM) the
// shared-memory tile of compiler/schedule/gpu_shared_tile.h with its factors
// sampled: every spatial loop of more than one iteration by
// SamplePerfectTile into [blocks, threads, registers] (registers at most
// kMaxRegistersPerAxis; TVM's SSSRRSRS structure with one level each) and
// its registers in 1 or 2 groups (SharedTileAxis: with 2, the loop is
// [blocks, 2, threads, registers], a thread's runs one run of every thread
// apart, as TVM's virtual threads place them), the
// first reduction loop into [chunks, chunk] (chunk at most kMaxKChunk), the
// other reduction loops whole inside the chunk (not fused into one, so that
// a convolution's unrolled chunk indexes its input without divisions), and
// the
// vector width of the copies into shared memory from {1, 2, 4}. The block
// tile, the threads per block, the K chunk and the loads are then what the
// search and its mutators (tile sizes, categorical) explore. Right after the
// samples, check_product refuses a point whose thread register tile passes
// kMaxRegistersPerThread (compiler/target/target.h), whose threads pass the
// target's max-threads-per-block or whose registers its registers-per-block,
// and check_footprint one whose tiles (their elements, halos included:
// gpu_tile_choice.h's TileFootprintLayout) pass the target's shared memory:
// such a draw fails there, before its primitives, and is drawn again. The
// few points the checks let through that a device cannot run (buffers a
// little larger than their tiles, rounded to the copy's threads) are
// refused when the candidate is built (the CUDA code generator's limits),
// before any measurement.
//
// The space's own point (the decisions its trace records, from which the
// search starts) is the best of the block's ranked tiles
// (gpu_tile_choice.h; the first kRankedPointsTried) that builds, with the
// widest copies that fit, each loop's registers in 2 runs when they are 8:
// the tile the default GPU schedule would take at extents its fixed tile
// does not divide. When none builds, it is the first sampled point that
// does.
//
// Applies to a reduction block whose loops are its own, with two spatial
// loops of more than one iteration, at least kMinOutputs outputs and a
// reduction of at least kMinReduction; a reduction with few outputs (what the
// default GPU schedule reduces across threads) is left to GpuBindBlock. The
// rule never branches: it returns the tiled schedule, or its input when the
// tile does not apply. Not every draw of the factors fits (more threads than
// a tile has elements to copy, copy indices the data-parallel proof cannot
// read): such a draw fails to replay, and the search draws the point again
// (SampleTrace in compiler/schedule/replay.h). Tests:
// tests/tuner/space/gpu_shared_tiling_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tuner/space/schedule_rule.h"

namespace lathe::tuner {

class GpuSharedTiling : public ScheduleRule {
 public:
  static constexpr int64_t kMaxRegistersPerAxis = 8;
  static constexpr int64_t kMaxKChunk = 32;
  static constexpr int64_t kMinOutputs = 256;
  static constexpr int64_t kMinReduction = 16;
  // At most this many outputs with a reduction of kCrossThreadReduction or
  // more: a cross-thread reduction's (default_gpu_schedule.h), not a tile.
  static constexpr int64_t kMaxCrossThreadOutputs = 8192;
  static constexpr int64_t kCrossThreadReduction = 64;
  // Points sampled to find one the tile fits (see the .cc) before the rule
  // gives up on the block.
  static constexpr int kSamplingAttempts = 32;
  // Ranked tiles tried as the space's own point.
  static constexpr size_t kRankedPointsTried = 16;

  std::string Name() const override { return "gpu_shared_tiling"; }
  absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>> Apply(
      std::unique_ptr<TracedSchedule> schedule, const std::string& block,
      const SpaceContext& context) const override;
};

}  // namespace lathe::tuner
