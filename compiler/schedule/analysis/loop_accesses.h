// The loads and stores below a loop, over loop variables only: what the
// data-parallel analysis (data_parallel.h) compares.
//
// Each block iteration variable is replaced by its binding, through nested
// blocks, so that every index is an expression of loop variables. Buffers
// private to one iteration of the scope are left out: those allocated by a
// block below the scope (fresh in every instance of that block), and the
// root's local and shared buffers (caches) that only the scope's subtree
// touches and that no store updates from its own value
// (RootBuffersPrivateToIterations).
// Tests: tests/compiler/schedule/analysis/loop_accesses_test.cc.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/ir/program.h"

namespace lathe {

// One load or store below a scope, its indices over loop variables only.
struct LoopAccess {
  // The innermost block holding the access (the block enclosing the scope
  // for a statement below the scope but outside every block there).
  const BlockNode* block = nullptr;
  BufferPtr buffer;
  std::vector<Expr> indices;
  bool is_write = false;
};

// A block below a scope with its bindings over loop variables.
struct ExpandedBlock {
  const BlockNode* block;
  // One per iteration variable, over loop variables.
  std::vector<Expr> bindings;
};

struct LoopAccessesAndBlocks {
  std::vector<LoopAccess> accesses;
  std::vector<ExpandedBlock> blocks;  // in the order of the walk
};

// The accesses in the subtree of `scope` (init, body, predicates of every
// block below), except those of buffers allocated below the scope, and the
// blocks below it, in one walk.
LoopAccessesAndBlocks CollectLoopAccessesAndBlocks(const Program& program,
                                                   const ForNode& scope);
// Its accesses only.
std::vector<LoopAccess> CollectLoopAccesses(const Program& program,
                                            const ForNode& scope);

// The buffers of the root's allocations, of local or shared scope, whose
// every load and store lies in `scope`'s subtree and that no store updates
// from its own value (no accumulation, e.g. a cache_read computed at a loop
// of the scope). Lowering allocates each of them in the body of the
// innermost loop around all its accesses (compact_buffers.h), which is
// `scope` or a loop below it, so every iteration of `scope` has its own
// copy; and no value flows between iterations through it, as a producer
// moved under a consumer's loop writes in each iteration everything the
// consumer reads in it (compute_at.h). A loop bound to blockIdx therefore
// gives each block its own copy (shared memory), a loop bound to threadIdx
// each thread its own (registers).
std::set<const Buffer*> RootBuffersPrivateToIterations(const Program& program,
                                                       const ForNode& scope);

// The statements enclosing `stmt`, from the root down (empty when it is not
// in the program), in one walk of the tree where Program::ParentOf walks it
// once per level.
std::vector<const StmtNode*> AncestorsOf(const Program& program,
                                         const StmtNode* stmt);

// The variables of the loops in `scope`'s subtree, `scope`'s first, in
// pre-order.
std::vector<Expr> LoopVarsIn(const ForNode& scope);

// `B[i * 4 + j]`, and `block "C"` (`the loop body` outside every block), for
// messages.
std::string AccessText(const LoopAccess& a);
std::string BlockText(const LoopAccess& a);

// Pairs of accesses to one buffer, at least one a write; a store is paired
// with itself (two iterations executing it). Calls fn(first, second) with the
// write second when only one writes; stops at the first error fn returns.
template <typename Fn>
absl::Status ForEachConflictCandidate(const std::vector<LoopAccess>& accesses,
                                      Fn fn) {
  for (size_t i = 0; i < accesses.size(); ++i) {
    for (size_t j = i; j < accesses.size(); ++j) {
      const LoopAccess& x = accesses[i];
      const LoopAccess& y = accesses[j];
      if (x.buffer != y.buffer || (!x.is_write && !y.is_write)) continue;
      absl::Status s = y.is_write ? fn(x, y) : fn(y, x);
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace lathe
