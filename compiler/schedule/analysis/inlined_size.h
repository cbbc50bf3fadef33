// How large an expression grows when a block is inlined into it.
//
// Inlining replaces each read of a buffer by the value stored into it, so a
// chain of stages that each read the one before twice (T2 = T1 * T1,
// T3 = T2 * T2, ...) doubles in size with every stage inlined: twenty
// stages make a million nodes, and every pass that walks expressions as
// trees (simplification, printing, lowering, features) takes time and
// memory in proportion. compute_inline and reverse_compute_inline refuse
// (FailedPrecondition) an inlining whose result would have more than
// kMaxInlinedExprNodes nodes counted as a tree, so a design space grows
// with the program, never exponentially. Counting stops just past the
// limit: the work is bounded too.
// Tests: tests/compiler/schedule/analysis/inlined_size_test.cc.
#pragma once

#include <cstdint>

#include "compiler/ir/buffer.h"
#include "compiler/ir/expr.h"

namespace lathe {

inline constexpr int64_t kMaxInlinedExprNodes = 2048;

// The nodes of `expr` counted as a tree (a shared subexpression once per
// use), or a number above `cap` once the count passes it.
int64_t ExprTreeSize(const Expr& expr, int64_t cap);

// The nodes of `expr` counted as a tree once every load of `buffer` is
// replaced by `value` with value's variables replaced by the load's
// indices (an upper bound: each variable use counted as the indices of the
// load together), or a number above `cap` once the count passes it.
int64_t InlinedExprSize(const Expr& expr, const Buffer& buffer,
                        const Expr& value, int64_t cap);

}  // namespace lathe
