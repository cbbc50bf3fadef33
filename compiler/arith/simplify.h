// Algebraic simplification of index expressions.
//
// Integer sums are rewritten in a canonical linear form (terms in order of
// first appearance, constants last; the terms a split and a fuse leave,
// (x // C) * (C / b) + (x % C) // b, merged back into x // b, the middle
// digits of a fuse of three parts or more, (x // b) % a, read as
// (x % (a * b)) // b, and ((x // C) % a) * (C / b) + (x % C) // b, the
// digits below a * C (the first written (x % (a * C)) // C too), merged
// into (x % (a * C)) // b),
// floordiv/floormod by constants cancel the multiples of the divisor
// ((x % C) % c is x % c where c divides C) and vanish when bounds allow, and
// comparisons,
// min, max and select fold when the variable ranges decide them. The result is
// always equal to the input for every value in the ranges. Float arithmetic is
// left alone (reassociation would change results).
// Tests: tests/compiler/arith/simplify_test.cc.
#pragma once

#include "compiler/arith/int_bounds.h"
#include "compiler/ir/expr.h"

namespace lathe {

Expr Simplify(const Expr& expr, const VarRanges& ranges = {});

}  // namespace lathe
