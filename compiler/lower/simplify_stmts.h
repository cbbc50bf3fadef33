// SimplifyStmts: the clean-up pass of lowering. Every index, value and
// condition is simplified (arith/simplify.h) under the ranges of the loops
// around it, and conditions decided by those ranges are folded: an If whose
// condition is provably true becomes its then-branch, provably false its
// else-branch (or nothing). Nothing moves: no hoisting, no loop splitting,
// conditions are not used to narrow ranges. Empty statements left behind
// are removed from sequences.
// Tests: tests/compiler/lower/simplify_stmts_test.cc.
#pragma once

#include "absl/status/status.h"
#include "compiler/ir/program.h"

namespace lathe {

absl::Status SimplifyStmts(Program* program);

}  // namespace lathe
