// The legality checks of CPU code generation that need only the loop IR (no
// LLVM): which vectorized loops become explicit vector IR, and which lazy
// operands (of a select, an and, an or) may be evaluated eagerly.
//
// Explicit vectors: a vectorized loop whose body is a sequence of float32
// stores, each at a unit-stride address in the loop variable (last index
// `var + c`, the others invariant), with values built from such loads,
// invariant subexpressions, float arithmetic and the unary functions exp,
// erf, tanh, abs and sqrt, can run in chunks of
// `lanes` iterations, each statement once per chunk on <lanes x float>
// values, invariant subexpressions evaluated once and broadcast. Lane-wise
// execution equals the scalar order when every load of a buffer stored in
// the body reads the element the store writes (same indices), which is
// checked; an invariant subexpression must not read a buffer stored in the
// body. compiler/codegen/llvm/kernel_emitter.cc emits what these accept.
//
// All functions are pure and never fail: a loop or expression they cannot
// prove legal is answered "no" (0 lanes, false).
// Tests: tests/compiler/codegen/codegen_llvm_test.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/arith/int_bounds.h"
#include "compiler/ir/expr.h"
#include "compiler/ir/stmt.h"

namespace lathe {

// Appends the stores of `s` when it is a store or a (nested) sequence of
// stores, in execution order; sets *ok to false when it holds anything else.
void CollectStraightLineStores(const StmtNode* s,
                               std::vector<const StoreNode*>* stores, bool* ok);

// True when evaluating e can neither fault nor trap: its loads are provably
// in bounds under the loop ranges and it divides only by non-zero constants.
// Such a lazy operand is evaluated eagerly (a select, an and), which keeps
// loops branch-free.
bool IsSafeToSpeculate(const Expr& e, const VarRanges& ranges);

// The lanes of explicit vector IR for this vectorized loop: the widest power
// of two up to `max_lanes` (the target's float32 lanes) that divides the
// extent, when it is at least 4 and the body qualifies (see above); else 0.
// `ranges` bounds the enclosing loop variables, the loop's own included.
int64_t ExplicitVectorWidth(const ForNode& loop, int64_t max_lanes,
                            const VarRanges& ranges);

}  // namespace lathe
