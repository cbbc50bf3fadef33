// What the schedule rules ask about a block's place in the program: whether
// its loop nest is still the one of the initial program (no rule has tiled,
// fused or moved it yet), and whether a tiling rule has claimed it.
//
// The rules use these to stay out of each other's way: a block that the
// tiling rule tiled is marked with kTiledAnnotation (and its loops are no
// longer its own), so the rfactor and parallel-vectorize-unroll rules leave
// it alone; a block placed on purpose (kPlacedAnnotation) or nested with
// others is not moved again.
// Tests: tests/tuner/space/block_nest_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "compiler/ir/program.h"

namespace lathe::tuner {

// The block annotation (value 1) with which a tiling rule marks the blocks it
// has scheduled; annotations never change what a program computes and are
// dropped by lowering.
inline constexpr char kTiledAnnotation[] = "lathe.tiled";
// The block annotation (value 1) with which a rule marks a block it placed on
// purpose where it is, e.g. an operand packed once at the root because
// packing it under the parallel loop would repeat the work in every
// iteration: RandomComputeLocation does not move it.
inline constexpr char kPlacedAnnotation[] = "lathe.placed";

// One loop of a block's own nest.
struct NestLoop {
  const ForNode* loop = nullptr;
  int iter_index = -1;  // the iteration variable it binds
  IterType type = IterType::kSpatial;
  int64_t extent = 1;
};

// The loops above `block`, outermost first, when the nest is the block's own:
// the block sits at the root scope, alone in its top-level statement (no
// other block shares any of its loops), every loop above it is serial and
// binds exactly one iteration variable directly (iter_values[i] is the loop
// variable), one loop per iteration variable. This is the shape of every
// stage of an initial program and of the blocks rfactor and cache_write
// create at the root; a split, fuse, reorder-free tiling or compute_at breaks
// it. nullopt otherwise (also for a block with no loop).
std::optional<std::vector<NestLoop>> OwnNest(const Program& program,
                                             const BlockNode& block);

// Whether the block carries kTiledAnnotation / kPlacedAnnotation.
bool IsTiled(const BlockNode& block);
bool IsPlaced(const BlockNode& block);

// Whether the block is at the root scope and alone in its top-level
// statement (the outermost loop above it, or the block itself when it has
// no loop, contains no other block).
bool AloneAtRoot(const Program& program, const BlockNode& block);

// The product of the extents of the block's iteration variables of `type`.
int64_t IterProduct(const BlockNode& block, IterType type);

// The block's operands: its reads of buffers it does not write (a
// reduction's read of its own accumulator is not one), in the order of
// AccessesOf.
std::vector<BufferAccess> Operands(const BlockNode& block);

// Whether some operand is not indexed by some spatial variable of extent
// >= 2: the values it reads are reused across that variable, which tiling
// can keep in registers or cache (a matmul's A across j; a convolution's
// weights across the pixels). Plain reductions and pooling reuse nothing.
bool HasDataReuse(const BlockNode& block);

// Whether every store of the block writes at a last index that is exactly
// the iteration variable `iter` (consecutive iterations, consecutive
// elements: the variable a vector loop takes).
bool StoresEndWith(const BlockNode& block, int iter);

// Whether some index of `access` uses `var`.
bool AccessUses(const BufferAccess& access, const Expr& var);

}  // namespace lathe::tuner
