// Block motion: the checks and tree edits shared by the primitives that move
// or fold blocks (compute_at, reverse_compute_at, compute_inline,
// reverse_compute_inline).
//
// - Who touches a buffer: WritersOf / ReadersOf.
// - Which blocks may run, in time, between two places of the program
//   (BlocksInterleaved): the dependence checks of a move ask whether any of
//   them writes what the moved block reads, or touches what it writes.
// - Whether a block's predicate only clips its domain (the tail guard of a
//   non-divisible split), so that a block moved into new loops may replace it
//   by its own clipping.
// - Building the loops of a moved block; removing a statement with the loops
// and sequences it leaves empty. Tests:
// tests/compiler/schedule/analysis/block_motion_test.cc.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/ir/program.h"
#include "compiler/schedule/analysis/region.h"

namespace lathe {

// Blocks (other than the root) whose init or body stores to / loads from
// buffer, in program order.
std::vector<BlockNode*> WritersOf(const Program& program, const Buffer* buffer);
std::vector<BlockNode*> ReadersOf(const Program& program, const Buffer* buffer);

// Whether statement a comes before statement b in program order (pre-order;
// an ancestor comes before its descendants).
bool ComesBefore(const Program& program, const StmtNode* a, const StmtNode* b);
// Whether `ancestor` is `stmt` or contains it.
bool Contains(const StmtNode* ancestor, const StmtNode* stmt);

// A conservative superset of the blocks an instance of which may execute
// between an instance of statement a and an instance of statement b, where a
// comes before b in program order: the blocks after a and before b in program
// order, and every block under a loop that is (or encloses) a or b. Blocks
// inside a or b themselves are left out. In program order.
std::vector<BlockNode*> BlocksInterleaved(const Program& program,
                                          const StmtNode* a, const StmtNode* b);

// True when the block's predicate holds for every instance whose bindings
// all lie in [0, extent) of their iteration variables: each conjunct is
// provably true, or bounds one binding by what its range already implies
// (`i_0 * 4 + i_1 < 7` for a binding i_0 * 4 + i_1 of extent 7).
bool PredicateOnlyClipsDomain(const Program& program, const BlockNode& block);

// The conditions 0 <= binding < extent that are not provably true under the
// ranges, as one conjunction (True() when none is needed).
Expr DomainClip(const std::vector<Expr>& bindings,
                const std::vector<IterVar>& iter_vars, const VarRanges& ranges);

// True when the block's init and body use no variable other than its
// iteration variables and the loops inside its body (so that the block may be
// moved to other loops by changing its bindings only).
bool BodyUsesOnlyIterVars(const BlockNode& block);

// Removes stmt from the program, then every ancestor left empty (a loop
// whose body it was, a sequence with no statement left); a sequence left with
// one statement is replaced by it.
// Errors: FailedPrecondition when stmt is the root or the branch of an If.
absl::Status RemoveStmt(Program* program, StmtNode* stmt);

// Removes buffer from the alloc_buffers of the block that allocates it (if
// any).
void RemoveAllocation(Program* program, const Buffer* buffer);

// The indices at which `block` writes `buffer`, when they tell which instance
// wrote an element: every store of the block writes `buffer` (and nothing
// else) at the same indices; each index is an iteration variable v, v // c or
// v % c (c a positive constant); every spatial variable appears alone or as
// both v // c and v % c, and no reduction variable appears. The identity
// B[vi, vj] and packed layouts B[vj // 16, vk, vj % 16] qualify.
// Errors: FailedPrecondition naming what does not fit ("it writes 2
// buffers", "its store indices [vi + 1] do not determine its instance").
absl::StatusOr<std::vector<Expr>> InjectiveWriteIndices(const BlockNode& block,
                                                        const Buffer& buffer);

// Matches an access `indices` against write indices `pattern` of `writer`
// (from InjectiveWriteIndices): the value of each iteration variable of the
// writer for which pattern equals indices (v // c matches x // c, v % c
// matches x % c, v matches anything; a variable matched twice must get equal
// values). The writer's instance with those values wrote the element read.
// Errors: FailedPrecondition "indices [...] do not match the writes [...]".
absl::StatusOr<VarMap> MatchWriteIndices(const std::vector<Expr>& pattern,
                                         const BlockNode& writer,
                                         const std::vector<Expr>& indices);

// A new loop nest around `block`: iteration variable j ranges over
// [ranges[j].min, + ranges[j].extent), one new serial loop per variable
// (outermost first, named ax0, ax1, ...; a loop of extent 1 only when
// preserve_unit_loops), bound to min + loop, with the predicate DomainClip
// under `outer` (the ranges of the loops around the place of the nest).
StmtPtr BuildBlockNest(const Program& program, std::unique_ptr<BlockNode> block,
                       const std::vector<RegionDim>& ranges,
                       const VarRanges& outer, bool preserve_unit_loops);

// OK when every loop around stmt (up to the root) whose iterations run
// concurrently (parallel, vectorized, thread-bound) is still data-parallel
// (analysis/data_parallel.h): a block moved or rewritten under such a loop
// must not make two iterations touch the same element (a recomputed
// reduction would race on its accumulator). Otherwise FailedPrecondition
// `loop "j" would stop being data-parallel (...)`.
absl::Status CheckConcurrentLoopsAround(const Program& program,
                                        const StmtNode* stmt);

// Inserts stmt as the first / last statement of the loop's body.
void PrependToLoop(ForNode* loop, StmtPtr stmt);
void AppendToLoop(ForNode* loop, StmtPtr stmt);

// Whether the indices are distinct spatial iteration variables of block, each
// of the extent of its dimension of shape: the block then writes every
// element of a buffer of that shape, each exactly once.
bool IndexesWholeShape(const BlockNode& block, const std::vector<Expr>& indices,
                       const std::vector<int64_t>& shape);

}  // namespace lathe
