// The per-store view of a lowered program that every feature group reads:
// for each Store, the loops above it (extents, kinds, annotations), the If
// guards above it, how often it runs, and the buffers it touches with their
// access geometry (access_geometry.h). One walk of the program builds it, so
// that the groups do not each walk the tree again.
//
// The walk expects LowerProgram's output (lowered_form.h): loops, Ifs, Seqs,
// Stores and allocation-scope blocks, indices over loop variables only. On
// any other program it does not fail: a block's predicate counts as a guard,
// its init as a statement, and indices over variables that are not loop
// variables as touching their whole dimension.
// Tests: tests/tuner/features/store_context_test.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/arith/int_bounds.h"
#include "compiler/ir/program.h"

namespace lathe::tuner {

struct LoopFrame {
  const ForNode* loop = nullptr;
  int64_t extent = 1;  // at least 1 (an empty loop counts as one pass)
  ForKind kind = ForKind::kSerial;
};

// One buffer as one store touches it: the store's own write and every Load
// in its value and indices, merged per buffer.
struct BufferUse {
  BufferPtr buffer;
  bool read = false;
  bool write = false;
  // Allocated by the program (an intermediate or a cache), not a parameter.
  bool allocated = false;
  // Loads plus stores of the buffer per execution of the store.
  int num_accesses = 0;
  // The distinct index tuples (structurally different indices), in order of
  // appearance.
  std::vector<std::vector<Expr>> index_tuples;

  // Geometry, filled by ComputeAccessGeometry (access_geometry.h). With n
  // loops above the store, for d = 0..n: the unique elements and the unique
  // 64-byte lines that the loops at depth >= d touch, the loops above d
  // held at their first iteration (d = n: one execution; d = 0: the whole
  // nest). The union of the index tuples' bounding boxes.
  std::vector<double> footprint_elements;
  std::vector<double> footprint_lines;
  // Per loop above the store: by how many elements the flat (row-major)
  // index moves when that loop's variable steps by one (absolute value; 0
  // when the access does not move with it).
  std::vector<int64_t> strides;
  // Per loop above the store: whether its variable occurs in an index.
  std::vector<bool> uses_loop;
};

struct StoreContext {
  const StoreNode* store = nullptr;
  std::vector<LoopFrame> loops;  // outermost first, across allocation scopes
  std::vector<Expr> guards;  // conditions of the Ifs above (negated in else)
  // Estimated share of the loop iterations in which every guard holds.
  double guard_fraction = 1;
  // How many times the store runs: the product of the loop extents times the
  // guard fraction.
  double executions = 1;
  // [0] is the buffer written; then the buffers read, in order of appearance
  // (the written buffer, when also read, only at [0] with read set).
  std::vector<BufferUse> buffers;
  // Indices into `buffers` of the buffers read other than the written one,
  // costliest first (more lines accessed, then a larger footprint, then
  // order of appearance): the slots of the per-buffer features.
  std::vector<int> read_order;
};

// An allocation: a buffer of the root block or of an allocation scope.
struct AllocationSite {
  BufferPtr buffer;
  std::vector<LoopFrame> loops;  // the loops above the allocation
  double executions = 1;         // how many times it is allocated
};

struct ProgramWalk {
  std::vector<StoreContext> stores;         // in program order
  std::vector<AllocationSite> allocations;  // root first, then in program order
  int64_t num_loops = 0;                    // For statements in the program
  int64_t num_loop_nests = 0;               // loops with no loop above them
  // Executions of every parallel loop (the fork-joins the program pays for):
  // per parallel loop, the product of the extents of the loops above it.
  double parallel_launches = 0;
};

// Walks `lowered` (see the top of this file for what it expects).
ProgramWalk WalkProgram(const Program& lowered);

// Estimated share of the points of `ranges` where `cond` holds: for an
// integer comparison, the share of the interval of (lhs - rhs) that satisfies
// it, as if its values were uniform (exact when lhs - rhs is one variable
// plus a constant: `k == 0`, `i < 1000`); And, Or and Not
// combine shares as independent events; anything else counts as 1 (assumed
// to hold). Always in [0, 1].
double EstimateGuardFraction(const Expr& cond, const VarRanges& ranges);

}  // namespace lathe::tuner
