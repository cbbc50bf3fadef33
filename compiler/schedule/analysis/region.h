// Region analysis: which part of a buffer a block touches within one
// iteration of a loop.
//
// For a block B under a loop L, the loops strictly below L (down to B) vary
// over their whole ranges while L and every loop above it are held fixed: the
// region of a buffer that B accesses in one iteration of L is a box, one
// [min, min + extent) per dimension, whose mins are expressions of L and the
// loops above it and whose extents are integers. compute_at uses it to size
// the loops of a producer moved under a consumer's loop (what the consumers
// read in one iteration); reverse_compute_at to size a consumer moved under a
// producer's loop (what the producer writes in one iteration).
//
// How an index is bounded: the block's bindings are substituted into the
// index, whose span over the varying loops is SpanOfIndex's
// (compiler/arith/index_span.h): terms without a varying loop go to the min
// as they are; c * x for a varying loop x adds |c| * (extent - 1) to the
// extent; floordiv and floormod by a positive constant are bounded from the
// argument's span; another term of varying loops only is bounded by BoundOf.
// Anything else (min, max, select, loads in indices, a mixed product) cannot
// be bounded and is an error.
// Tests: tests/compiler/schedule/analysis/region_test.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/arith/int_bounds.h"
#include "compiler/ir/program.h"

namespace lathe {

struct RegionDim {
  Expr min;            // over the fixed loops only
  int64_t extent = 1;  // >= 1
};

struct Region {
  std::vector<RegionDim> dims;
  // True when every point of the box is accessed by some iteration of the
  // varying loops (a write region may then be read in full), the block's
  // predicate aside; false when the box may be larger than what is accessed.
  bool exact = true;
};

enum class AccessKind { kRead, kWrite };

// The region of one index tuple, given the ranges of the varying variables
// (`varying`) and of every variable the result may mention (`fixed`; used to
// simplify). Variables not in `varying` are treated as fixed symbols.
// Errors: FailedPrecondition "cannot infer the region of index ..." for an
// index that is not bounded by the rules above.
absl::StatusOr<Region> IndexRegion(const std::vector<Expr>& indices,
                                   const VarRanges& varying,
                                   const VarRanges& fixed);

// The region of `buffer` that `block` reads (or writes) in one iteration of
// `loop`, which must be one of the loops above the block (Program::LoopsAbove);
// loop == nullptr lets every loop above the block vary. The block's predicate
// is ignored: the box covers every instance the loops reach, so it may be
// larger than the true region (callers that need exactness deal with the
// predicate themselves). Several accesses are joined by UnionRegions.
// Errors: InvalidArgument when the block does not access the buffer or the
// loop is not above it; FailedPrecondition when a region cannot be inferred
// (an index that is not bounded, a variable that is not a loop above the
// block).
absl::StatusOr<Region> BlockRegionUnderLoop(const Program& program,
                                            const BlockNode& block,
                                            const ForNode* loop,
                                            const Buffer* buffer,
                                            AccessKind kind);

// The region of an index tuple over the iteration variables of `block` (as
// in its body) in one iteration of `loop`, as BlockRegionUnderLoop does for
// each access: the same loops vary, the same errors.
absl::StatusOr<Region> IndicesRegionUnderLoop(const Program& program,
                                              const BlockNode& block,
                                              const ForNode* loop,
                                              const std::vector<Expr>& indices);

// The same, with the loops above the block (Program::LoopsAbove, outermost
// first) and the ranges of every loop around it (LoopRangesAbove) given by
// the caller: for one that asks many questions of one program and looks them
// up in a StmtIndex (stmt_index.h).
absl::StatusOr<Region> IndicesRegionUnderLoop(
    const BlockNode& block, const ForNode* loop,
    const std::vector<ForNode*>& loops_above, VarRanges ranges_above,
    const std::vector<Expr>& indices);

// The smallest box (with constant extents) that contains both regions: per
// dimension, when the mins differ by a constant, or by an expression bounded
// under `fixed`. The union is exact only when both are exact and equal.
// Errors: FailedPrecondition when the mins differ by an unbounded amount, or
// the ranks differ.
absl::StatusOr<Region> UnionRegions(const Region& a, const Region& b,
                                    const VarRanges& fixed);

}  // namespace lathe
