// Data parallelism of loops: whether the iterations of a loop may run in any
// order or at once (parallel, vectorize, bind), and whether permuting loops
// keeps the order of every pair of dependent accesses (reorder).
//
// Method. The loads and stores below a loop are expanded to loop variables:
// each block iteration variable is replaced by its binding, through nested
// blocks. Two executed accesses touch the same element only when every index
// agrees (accesses of a valid program are in bounds). To prove that two
// accesses, made in instances where the loop variables below a scope take
// independent values, can meet only when a loop variable v has the same value
// in both, the analysis looks in each index for the form c * D(x) + r, where
// x mentions v (x is v, or a sum such as the f_0 * 8 + f_1 of a fused loop
// split again), D(x) is a digit of x (x, x // a, x % b or (x // a) % b) and r
// does not mention v. When both accesses have the same c and digit, and their
// rests differ by less than |c| (interval bounds), equal indices force equal
// digits; digits that chain from the lowest (a = 1) up to x's range (or
// up to the range of x - x', where the loops outside the scope cancel: a
// copy's (o * 14 + f // 16) % 16 fixes f // 16 when o is the same) force
// equal x, which is then one more equation to look into. A variable proven
// equal is held equal while proving the others (j_0 * 2 + j_1 gives j_0, then
// j_1). So `C[i, j]` determines i and j; after fuse, `C[f // 8, f % 8]`
// determines f; after split, `B[i_0 * 4 + i_1]` determines i_0 and i_1.
// Whatever the analysis cannot prove counts as a conflict: it refuses, never
// guesses (e.g. a tile that recomputes elements its neighbour also computes,
// even with equal values).
//
// Buffers allocated by a block below the scope are fresh in every instance of
// that block, hence private to one iteration, and never conflict. So are the
// root's local and shared buffers (caches) that only the loop's subtree
// touches and that are never updated from their own value: lowering
// allocates them inside the loop (RootBuffersPrivateToIterations in
// loop_accesses.h), so a shared cache computed at a loop under a blockIdx
// loop is each block's own. Other buffers allocated at the root (global
// intermediates, accumulators) are one buffer for the whole program: the IR
// semantics of stmt.h.
//
// The accesses come from loop_accesses.h, the digits from index_digits.h;
// this file holds the proof over them and the checks the primitives call.
// Tests: tests/compiler/schedule/analysis/data_parallel_test.cc.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/arith/int_bounds.h"
#include "compiler/ir/program.h"
#include "compiler/schedule/analysis/loop_accesses.h"

namespace lathe {

// Whether a (in one instance) and b (in another instance, where the loop
// variables in `varying` take values independent of a's, and all other loop
// variables the same values) can touch the same element only when `var` (one
// of `varying`) has the same value in both. `ranges` holds the range of every
// loop variable. False means "not proven".
bool SameElementImpliesSameValue(const LoopAccess& a, const LoopAccess& b,
                                 const Expr& var,
                                 const std::vector<Expr>& varying,
                                 const VarRanges& ranges);

// OK when the iterations of `loop` are independent:
// 1. every block below binds the loop only into spatial iteration variables;
// 2. for every buffer written below the loop (and not private to an
//    iteration), any two accesses to it (at least one a write, a store paired
//    with itself included) touch the same element only in the same iteration.
// Otherwise FailedPrecondition: `<primitive>: loop "k" is not data-parallel:
// block "C" binds it to reduce iteration variable "vk"`, or naming the two
// blocks and accesses that may conflict.
absl::Status CheckDataParallel(const Program& program, const ForNode& loop,
                               const std::string& primitive);

// For reorder: `span` are the loops from the outermost to the innermost
// reordered loop (a perfect nest, outermost first), `new_order` the same loops
// in their order after the reorder. OK when, for every pair of accesses below
// the span that may touch the same element (at least one a write), the span
// loops whose values may differ between the two keep their relative order:
// then every dependence runs in the same direction before and after. The
// order of a reduction's updates to one element is a dependence too, so two
// reduction loops keep their relative order (floating-point sums are not
// reassociated). Otherwise FailedPrecondition naming the two loops.
absl::Status CheckReorderKeepsDependences(
    const Program& program, const std::vector<const ForNode*>& span,
    const std::vector<const ForNode*>& new_order);

// CheckReorderKeepsDependences apart from the proof of which loops two
// accesses hold equal, which the caller gives (the analysis, or a plain
// version of it in a test). `span` must not be empty.
class ReorderCheck {
 public:
  ReorderCheck(const Program& program, const std::vector<const ForNode*>& span,
               const std::vector<const ForNode*>& new_order);

  // The loop variables below the span's outermost loop (which may differ
  // between two accesses), and the ranges of every loop.
  const std::vector<Expr>& varying() const { return varying_; }
  const VarRanges& ranges() const { return ranges_; }

  // The check, with determined(x, w) the variables of varying() that the
  // accesses x and w (w writes) hold equal.
  template <typename Fn>
  absl::Status Run(Fn determined) const {
    return ForEachConflictCandidate(
        accesses_,
        [&](const LoopAccess& x, const LoopAccess& w) -> absl::Status {
          return CheckPair(x, w, determined(x, w));
        });
  }

 private:
  absl::Status CheckPair(const LoopAccess& x, const LoopAccess& w,
                         const std::set<const ExprNode*>& determined) const;
  static size_t Position(const std::map<const ForNode*, size_t>& pos,
                         const ForNode* loop);

  std::vector<const ForNode*> span_;
  std::map<const ForNode*, size_t> old_pos_, new_pos_;
  std::vector<LoopAccess> accesses_;
  std::vector<Expr> varying_;
  VarRanges ranges_;
};

// The loops nested with `loop`: its ancestors (through enclosing blocks, up
// to the root) and every loop below it, `loop` excluded. Used to keep one
// level of CPU parallelism and one binding per thread axis in a nest.
std::vector<const ForNode*> LoopsNestedWith(const Program& program,
                                            const ForNode& loop);

}  // namespace lathe
