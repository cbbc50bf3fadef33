// ComputeProducerAtTile: a step of MultiLevelTiling (multi_level_tiling.h)
// that computes a tiled block's producing reduction inside the block's outer
// tile, so the value between them is never written out whole: a depthwise
// convolution and its epilogue computed at the tile of the 1x1 projection
// that reads them (a MobileNetV2 block's second half written as one custom
// workload), a few pixels' channels at a time.
//
// The chain (ProducerChainOf): the tiled block C reads a buffer X written by
// an element-wise block E (the producer's epilogue: bias, clip), which reads
// a buffer Y written by a channel-wise reduction P: it reuses data across
// positions (HasDataReuse) and every operand reads at the lane's own index
// (a depthwise convolution; not a matmul). E and P sit at the root in nests of
// their own, untouched by other rules, each with a single reader (C, E); E's
// innermost variable and P's last spatial variable index the last dimension
// of what they write (the lanes of a channel-blocked activation), and P's
// spatial loops come before its reduction loops.
//
// The step, on a branch whose nest is tiled (after the cache write and the
// packing):
//  1. compute_at(E, last loop of the outer level): E computes the region of
//     X that one outer tile of C reads (with C's reduction over the channels
//     inside the tile, every channel of the tile's pixels); its innermost
//     loop (the lanes) is vectorized;
//  2. E's position loop (the one above its lanes) is split by
//     kFusedPositions and P computed at the outer part: kFusedPositions
//     positions' lanes at a time, its loops reordered so the window's taps
//     are outside, the positions (unrolled: independent accumulators) and
//     the lanes (vectorized) inside, its init decomposed before the taps;
// So Y shrinks to a few vectors and X to one tile; both stay in registers
// or L1/L2 where the unfused program writes and reads them through memory.
// Locations and the split are fixed (the numbers of loops that get_loops
// records then never depend on a decision; a tile whose positions
// kFusedPositions does not divide gets a predicated tail); the search tunes
// the fusion through C's tile sizes, which set X's tile. E and P are marked
// kPlacedAnnotation. A padding stage that P reads stays where it is, for
// RandomComputeLocation (computed at E's rows it would write the rows it
// shares with the next parallel tile twice, for some tile sizes).
// The step applies to a branch whose parallel loop's variable indexes X (a
// row of pixels, not the output channels): each parallel iteration then
// reads its own slice of X, so E and P under it write disjoint elements for
// every decision. Otherwise, or where a primitive refuses, the step fails
// and MultiLevelTiling builds the branch without it (E and P then stay at
// the root, for the other rules).
// InlineElementwise leaves E a block (IsEpilogueBetweenReductions) so that
// the step finds it: inlined into C, its bias and clip would be computed
// again for every output channel the tile multiplies it with.
// Tests: tests/tuner/space/compute_producer_at_tile_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "compiler/ir/program.h"
#include "compiler/schedule/traced_schedule.h"
#include "tuner/space/tiled_nest.h"

namespace lathe::tuner {

// Positions of P computed together (step 2): four independent vector
// accumulators, each fed by the window's taps; 2 and 8 measured the same on
// a fused MobileNetV2 block (bench/README.md, "Why the code is as it is").
inline constexpr int64_t kFusedPositions = 4;

// The producer chain of a tiled block: the names of E and P (above).
struct ProducerChain {
  std::string epilogue;   // E
  std::string reduction;  // P
};

// The chain that the step would move under `consumer`, or nullopt.
std::optional<ProducerChain> ProducerChainOf(const Program& program,
                                             const BlockNode& consumer);

// Whether `block` has the shape of a chain's E, its single reader is a
// reduction that reuses data, and it reads, through element-wise stages
// only, a block with the shape of a chain's P: the E of a chain once the
// stages between (a bias before the clip) are inlined into it.
bool IsEpilogueBetweenReductions(const Program& program,
                                 const BlockNode& block);

// Steps 1-2 above on `schedule`, whose block nest.block_name is tiled as
// `nest`.
absl::Status ComputeProducerAtTile(TracedSchedule* schedule,
                                   const TiledNest& nest,
                                   const ProducerChain& chain);

}  // namespace lathe::tuner
