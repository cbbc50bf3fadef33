// What a block's predicate guards.
//
// Splits that do not divide add predicates of the form `binding < extent`:
// they only skip instances whose iteration variable would leave [0, extent)
// (tail guards), so every value of that variable still runs. Primitives that
// must know that a block still covers its whole iteration domain (cache_write,
// rfactor) accept predicates made only of such guards.
// Tests: through tests/compiler/schedule/primitive/cache_write_test.cc and
// rfactor_test.cc.
#pragma once

#include <vector>

#include "compiler/arith/int_bounds.h"
#include "compiler/ir/stmt.h"

namespace lathe {

// The conjuncts of a boolean expression (And flattened); `true` has none.
std::vector<Expr> Conjuncts(const Expr& cond);

// The index of the iteration variable of `block` that `conjunct` guards, when
// conjunct (with the block's iteration variables replaced by their bindings)
// is `binding < extent` for that variable, up to simplification under
// `ranges`; -1 otherwise.
int TailGuardedIterVar(const BlockNode& block, const Expr& conjunct,
                       const VarRanges& ranges);

}  // namespace lathe
