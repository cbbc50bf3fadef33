// MultiLevelTiling: the schedule rule for GEMM- and convolution-like blocks
// on CPUs (matmul, batch_matmul, dense, conv2d): multi-level tiling with
// sampled perfect tiles, the output tile accumulated in registers, operands
// packed where it pays, the outer tile in parallel, the register tile
// vectorized and unrolled (docs/kernels.md; MetaSchedule's MultiLevelTiling
// with structure "SSRSRS").
//
// It applies to a reduction block whose loops are its own (block_nest.h:
// OwnNest), not yet tiled, that writes one buffer at its spatial variables
// and reuses data: some operand is not indexed by some spatial variable of
// extent >= 2 (a matmul's A does not depend on j). Softmax's sums, pooling
// and plain reductions reuse nothing and are left to the other rules.
//
// Plans (the rule branches; see PlanTilings):
//  - the vector variable: the one indexing the output's last dimension of
//    extent >= 2 (unit-stride stores); when its extent is not a multiple of
//    the lanes, or an operand reads it with a stride (a strided
//    convolution's input: its vector loads would be gathers), also (a
//    second branch) the innermost output variable whose extent is, provided
//    every operand either does not use it or uses it as a plain index of
//    one dimension (so packing can make it unit-stride): conv2d_nchw at
//    Q = 28, or at stride 2, vectorized over output channels, as oneDNN
//    does;
//  - the row variable: the innermost other output variable of extent >= 2;
//  - the outer variable: every spatial variable of extent >= 2 in turn. Its
//    loop comes first in the outer level and runs in parallel, so that e.g.
//    j-outer-then-i reuses a packed panel of B across every i block (the
//    hand-written matmul) while i-outer packs B once at the root. This is a
//    branch and not a sample_categorical: a sampled value reaches a program
//    only through split factors and compute locations, never through the
//    order of loops, so an order chosen from a sampled value would not
//    change when the search mutates the decision. One fused parallel loop
//    over the outer level would make the order moot but is not possible
//    yet: compact_buffers cannot see that a fused loop's iterations write
//    disjoint tiles and leaves the accumulator full-size.
// Steps of one branch (multi_level_tiling.cc):
//  1. Tile. The vector and row loops first give their register tile: a
//     sample_categorical among the divisors of the extent that fill whole
//     vectors up to plan.vector_tile (16 or 32 floats on AVX-512), or give
//     4 to plan.row_tile rows (4 rows of two vectors keep the 8 FMAs in
//     flight that two 4-cycle pipes need), used as a split factor; a prime
//     extent gets its largest divisor within the bound. When an operand is
//     packed, the vector loop is split by the panel width (a constant of
//     the plan) before that, so that tiles never straddle panels. What is
//     left of each spatial loop of extent >= 2 is split by
//     sample_perfect_tile into the outer, middle and inner levels; the first
//     reduction loop of extent >= 2 into 2; reorder as in tiled_nest.h.
//     (Uniform perfect tiles for the register tile, as MetaSchedule samples
//     them, made most matmul points scalar or one-row kernels, far slower
//     than the hand-written schedule: bench/README.md, "Why the code is as
//     it is".)
//  2. Accumulate the output tile in a local cache (cache_write_output.h).
//  3. Pack the operands where it pays (pack_operand.h).
//  4. Parallel outer loop; unroll the row loop, vectorize the vector loop;
//     mark the block tiled (block_nest.h: kTiledAnnotation).
// The location of a packed operand is fixed per branch, not sampled
// (pack_operand.h says why). Every decision is a sampling instruction
// (sample_perfect_tile, sample_categorical) whose value reaches the program
// as a split factor, so the search mutates tile sizes by decisions alone;
// every structural choice is fixed per branch and valid whatever the
// decisions (loops of extent 1 are kept: compute_at and reverse_compute_at
// preserve unit loops so that the number of loops, which get_loops records,
// never depends on a decision).
// A branch whose primitives refuse (an unusual custom workload) is dropped;
// when every branch is, the schedule is returned unchanged.
// Tests: tests/tuner/space/multi_level_tiling_test.cc (structure, the
// hand-written bench/traces as points of the space) and
// tests/tuner/space/multi_level_tiling_property_test.cc (random points compiled
// and checked against the reference).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/program.h"
#include "tuner/space/schedule_rule.h"
#include "tuner/space/tiled_nest.h"

namespace lathe::tuner {

class MultiLevelTiling : public ScheduleRule {
 public:
  struct Options {
    // Floats per vector register; 0: the target's VectorLanesF32().
    int64_t vector_lanes = 0;
    // The vector loop's innermost tile is at most this many vectors (2: a
    // 32-float row of the register tile on AVX-512, as in docs/kernels.md).
    int64_t vector_tile_vectors = 2;
    // Vector registers the accumulator may use; 0: all of the target's but
    // 4 (28 of 32 zmm: tiles up to 14 x 32 floats as in docs/kernels.md; 12 of
    // 16 ymm: 6 x 16), leaving room for the operand vectors and the broadcast.
    // The row tile is at most this / vector_tile_vectors.
    int64_t accumulator_registers = 0;
    // Also branch on vectorizing a non-contiguous output dimension through a
    // transposed accumulator (see above).
    bool transposed_vector_branch = true;
    // Pack operands through cache_read with a layout (pack_operand.h).
    bool pack_operands = true;
  };
  MultiLevelTiling() : MultiLevelTiling(Options{}) {}
  explicit MultiLevelTiling(const Options& options) : options_(options) {}

  std::string Name() const override { return "multi_level_tiling"; }
  absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>> Apply(
      std::unique_ptr<TracedSchedule> schedule, const std::string& block,
      const SpaceContext& context) const override;

  // The branches the rule would take on `block` of `program` for `target`,
  // in the order of the schedules Apply returns; empty when it does not
  // apply.
  std::vector<TilePlan> PlanTilings(const Program& program,
                                    const BlockNode& block,
                                    const Target& target) const;

 private:
  Options options_;
};

// Step 1 on `schedule`: tiles block `block` as `plan` says (the block's loops
// must be its own). Errors: those of the primitives.
absl::StatusOr<TiledNest> TileBlock(TracedSchedule* schedule,
                                    const std::string& block,
                                    const TilePlan& plan);

}  // namespace lathe::tuner
