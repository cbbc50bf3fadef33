// The tiled loop nest of a GEMM- or convolution-like block, as the steps of
// the MultiLevelTiling rule pass it to each other: which iteration variable
// plays which part (TilePlan, chosen from the block before anything is
// recorded) and the handles of the loops that tiling made (TiledNest).
//
// The structure (docs/kernels.md, MetaSchedule's "SSRSRS" for CPUs):
//   outer   S: a loop per spatial variable, the plan's outer variable first
//               (the loop made parallel), unit loops left unsplit before it
//   middle  S: a loop per spatial variable of extent >= 2 (the vector
//               variable split by a panel width first when an operand is
//               packed: its part across panels has the outer, middle and
//               inner levels, its part within a panel the inner and
//               register levels; the vector and row variables give their
//               register tile before the three levels)
//   reduce_outer R: the outer part of the first reduction variable of extent
//               >= 2 (unit reduction loops before it stay in front)
//   inner   S: a loop per spatial variable of extent >= 2
//   reduce_inner R: the inner part of that variable, then the other
//               reduction variables whole (reduction loops keep their
//               relative order: the reorder primitive refuses to reassociate
//               floating-point sums)
//   register S: the row loop (unrolled) and the vector loop (vectorized)
// The output tile accumulates in a local cache written back at the end of
// the middle level (cache_write_output.h); operands are packed at the outer
// loop or the root (pack_operand.h).
// Header only; tested through tests/tuner/space/multi_level_tiling_test.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/schedule/schedule.h"

namespace lathe::tuner {

// The parts of a block's iteration variables in one branch of the rule.
// Indices are into BlockNode::iter_vars.
struct TilePlan {
  int vector_iter = -1;  // innermost loop of the register tile, vectorized
  int row_iter = -1;     // the register tile's rows, unrolled (-1: none)
  int outer_iter = -1;   // its outer loop comes first and runs in parallel
  // The output dimension indexed by vector_iter is not the last one: the
  // accumulator is laid out with that dimension last (conv2d_nchw
  // vectorized over output channels).
  bool transposed_output = false;
  // Largest register tile of the vector and row loops: the accumulator must
  // fit in the vector registers.
  int64_t vector_tile = 1;
  int64_t row_tile = 1;
  // Floats per vector register of the target.
  int64_t lanes = 1;
  // Width of the panels an operand is packed into along the vector variable
  // (pack_operand.h), 0 when nothing is. The vector loop is then first split
  // by it, so every tile of the vector variable is a whole number of panels
  // or a divisor of one: packed reads stay unit-stride, and the copy of one
  // outer tile's panels provably writes elements of its own (parallel).
  int64_t panel = 0;
};

// The handles of a tiled nest in one schedule.
struct TiledNest {
  std::string block_name;
  BlockRV block;
  TilePlan plan;
  std::vector<LoopRV> outer, middle, reduce_outer, inner, reduce_inner,
      registers;
  LoopRV parallel_loop;            // the plan's outer variable, outer level
  LoopRV vector_loop;              // register level
  std::optional<LoopRV> row_loop;  // register level, when the plan has rows
};

}  // namespace lathe::tuner
