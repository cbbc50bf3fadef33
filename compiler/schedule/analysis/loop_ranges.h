// Ranges of loop variables, and the clean-up that uses them.
//
// Every loop variable ranges over [0, extent). Primitives that rewrite
// bindings (split, fuse, compute_at, ...) call SimplifyBindings afterwards so
// that bindings stay readable (i_0 * 8 + i_1, not ((i_0 * 8 + i_1) // 8) * 8
// + ...) and predicates that always hold disappear.
// Tests: tests/compiler/schedule/analysis/loop_ranges_test.cc.
#pragma once

#include "compiler/arith/int_bounds.h"
#include "compiler/ir/program.h"

namespace lathe {

// The ranges of all loop variables enclosing stmt (through enclosing blocks
// too, up to the root).
VarRanges LoopRangesAbove(const Program& program, const StmtNode* stmt);

// Ranges of every loop variable in the program.
VarRanges AllLoopRanges(const Program& program);

// Simplifies every block's iteration values and predicate under the ranges
// of the loops around it.
void SimplifyBindings(Program* program);
// The same for the blocks in `scope` (a statement of `program`, itself
// included): what a primitive calls on the statements it rewrote. The
// blocks elsewhere were left simplified under ranges that did not change,
// and simplifying a simplified binding again gives it back.
void SimplifyBindings(Program* program, StmtNode* scope);

}  // namespace lathe
