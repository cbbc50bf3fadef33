// Interval bounds of integer index expressions.
//
// Given the ranges of the variables (loop and iteration variables range over
// [0, extent)), BoundOf returns an interval that contains every value the
// expression can take. It is conservative (may be wider than the truth) but
// never too narrow: primitives rely on it to decide that a predicate always
// holds or that a region covers a consumer's accesses.
// Tests: tests/compiler/arith/int_bounds_test.cc.
#pragma once

#include <cstdint>
#include <limits>
#include <map>

#include "compiler/ir/expr.h"

namespace lathe {

struct Interval {
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();

  static Interval Point(int64_t v) { return {v, v}; }
  // [0, extent)
  static Interval Extent(int64_t extent) { return {0, extent - 1}; }
  bool is_bounded() const {
    return min != std::numeric_limits<int64_t>::min() &&
           max != std::numeric_limits<int64_t>::max();
  }
  bool is_point() const { return is_bounded() && min == max; }
};

// Ranges of variables, keyed by Var identity.
using VarRanges = std::map<const ExprNode*, Interval>;

Interval BoundOf(const Expr& expr, const VarRanges& ranges);

// True when the boolean expression holds for every value in the ranges
// (false means "not proven", not "false somewhere").
bool ProvablyTrue(const Expr& cond, const VarRanges& ranges);
bool ProvablyFalse(const Expr& cond, const VarRanges& ranges);

}  // namespace lathe
