// The factors of a shared-memory tile (gpu_shared_tile.h) for a reduction
// at any extents: what the default GPU schedule gives a convolution or a
// GEMM whose loops the fixed 16x16-thread tile does not divide (ResNet's 56,
// 28, 14 and 7), instead of one thread per output.
//
// Every tile whose factors divide the loops (bounded below) is scored, a closed
// form of the work a block does against what it loads, and the best few are
// returned for the caller to try in order (a tile's real shared footprint, its
// halo's bounding boxes, is only known once it is built). A tile here
// tiles two loops or more, with:
// - threads per spatial loop whose product is a whole number of warps in
//   [kMinTileThreads, min(kMaxTileThreads, max_threads)];
// - registers per spatial loop (at most kMaxTileRegistersPerAxis each),
//   kMinTileRegisters to kMaxTileRegisters accumulators per thread;
// - a K chunk of the first reduction loop (the largest power of two up to
//   kMaxTileKChunk that divides it, with the chunk's unrolled products,
//   chunk x the other reduction loops x the accumulators, within
//   kMaxTileUnrolledProducts, and the estimated tiles within
//   kMaxSharedTileElements and the problem's max_shared_elements);
// - intensity: a chunk's multiply-adds over the elements its tiles load
//   (their footprint, footprint.h: the tile of a spatial loop its threads
//   x registers, of the first reduction loop the chunk, of the others
//   their extent), at least kMinTileIntensity (pooling
//   and depthwise convolutions, which reuse little, stay with the plain
//   binding);
// - score: intensity x min(1, blocks / kTargetBlocks), the blocks that
//   keep every multiprocessor of a large GPU busy for two waves; ties go to
//   more threads, then fewer accumulators, then more threads along the
//   last loop, then enumeration order (the outermost loop's factors
//   first), so the choice is deterministic.
// Tests: tests/compiler/schedule/gpu_tile_choice_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "compiler/ir/program.h"
#include "compiler/schedule/gpu_shared_tile.h"

namespace lathe {

inline constexpr int64_t kMinTileThreads = 64;
inline constexpr int64_t kMaxTileThreads = 256;
inline constexpr int64_t kMaxTileRegistersPerAxis = 8;
inline constexpr int64_t kMinTileRegisters = 4;
inline constexpr int64_t kMaxTileRegisters = 32;
inline constexpr int64_t kMaxTileKChunk = 32;
// The CUDA code generator's bound on one unrolled region's stores
// (kMaxUnrolledRegion, which this layer cannot see), so that a chunk's
// products are unrolled whole.
inline constexpr int64_t kMaxTileUnrolledProducts = 1536;
inline constexpr double kMinTileIntensity = 8.0;
inline constexpr int64_t kTargetBlocks = 256;
// Bounds on the work of a ranking, whatever the loops: the last
// kMaxTiledLoops spatial loops of more than one iteration are tiled (a
// convolution's n, k, p, q), the others stay whole; the enumeration stops
// after kMaxTileVisits tiles and partial tiles, ranking what it has seen.
inline constexpr size_t kMaxTiledLoops = 4;
inline constexpr int64_t kMaxTileVisits = 1000000;

// A reduction as the tile sees it. Loops are numbered spatial first
// (outermost first), then reduction (in order; the first is chunked).
struct TileProblem {
  struct Term {
    size_t loop = 0;
    int64_t coefficient = 1;
  };
  // One index dimension of an input: affine terms, or (not affine) the
  // loops it uses.
  struct Dimension {
    std::vector<Term> terms;
    bool affine = true;
  };
  std::vector<int64_t> spatial;
  std::vector<int64_t> reduce;
  std::vector<std::vector<Dimension>> inputs;  // one per distinct input
  int64_t max_threads = 1024;
  // The elements (float32) the tiles of a K chunk may hold: the target's
  // shared memory per block when it allows fewer than
  // kMaxSharedTileElements.
  int64_t max_shared_elements = kMaxSharedTileElements;
};

struct TileChoice {
  std::vector<int64_t> threads;    // per spatial loop
  std::vector<int64_t> registers;  // per spatial loop
  int64_t k_chunk = 1;
  int64_t shared_elements = 0;  // estimated, one chunk's tiles
  int64_t blocks = 0;
  double intensity = 0;
  double score = 0;
};

// The best `limit` tiles of `problem`, best first; empty when none meets
// the bounds above (or the problem has fewer than two spatial loops, no
// reduction, a term naming a loop it does not have, or no shared memory).
std::vector<TileChoice> RankSharedTiles(const TileProblem& problem,
                                        size_t limit);

// How TileFootprintLayout counts an index dimension that is not affine in
// the loops (a grouped convolution's k / groups): the product of the tiles
// of the loops it uses (an estimate, for ranking tiles), or 1 (a bound
// below every allocation, for a check that must refuse no tile that fits).
enum class NonAffineSpan { kProductOfTiles, kOne };

// The layout (footprint.h) of the tiles of `problem`'s inputs, over
// factors: loop l's tile is the product of the factors whose indices
// `loop_factors[l]` lists (none: a tile of 1), at most the loop's extent;
// loops numbered as TileProblem says, one entry per spatial and reduction
// loop.
std::vector<int64_t> TileFootprintLayout(
    const TileProblem& problem,
    const std::vector<std::vector<int64_t>>& loop_factors,
    NonAffineSpan non_affine);

// The problem of `block` in `program`, when its loops are its own (each
// bound to one of its iteration variables, one per variable, as in an
// initial program's stage); nullopt otherwise. Its loops in the order
// ApplySharedTile hands them over (spatial, then reduction, each in loop
// order); its inputs each distinct buffer it reads but does not write.
std::optional<TileProblem> TileProblemOf(const Program& program,
                                         const BlockNode& block,
                                         int64_t max_threads);

}  // namespace lathe
