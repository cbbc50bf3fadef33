// Structural equality of expressions within one program.
//
// Two expressions are equal when they have the same kinds, types, constants,
// function names and operands, the same variables (by identity: distinct Var
// nodes are distinct variables, whatever their names) and the same buffers
// (by identity). Undefined expressions equal only each other. Unlike
// StructuralEqual (structural_equal.h), which compares whole programs up to
// a renaming of their variables, nothing is renamed here: this is the test
// that analyses use to merge equal terms, indices and accesses.
//
// Float immediates compare by value (0.0 equals -0.0, a NaN equals nothing)
// unless the caller asks for their bits (a NaN equals the same NaN, 0.0 does
// not equal -0.0), as a deduplication of access patterns does.
// Tests: tests/compiler/ir/expr_equal_test.cc.
#pragma once

#include <vector>

#include "compiler/ir/expr.h"

namespace lathe {

enum class FloatImmEquality { kByValue, kByBits };

bool ExprEqual(const Expr& a, const Expr& b,
               FloatImmEquality floats = FloatImmEquality::kByValue);

// Element-wise ExprEqual of two tuples (indices); false when the sizes differ.
bool ExprsEqual(const std::vector<Expr>& a, const std::vector<Expr>& b,
                FloatImmEquality floats = FloatImmEquality::kByValue);

}  // namespace lathe
