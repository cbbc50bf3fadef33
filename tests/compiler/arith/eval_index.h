// The value of an integer index expression (sums, products, floor division
// and modulo) at given values of its variables, by direct evaluation: the
// tests' reference for what simplification and the data-parallel proof
// reason about.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>

#include "compiler/ir/expr.h"

namespace lathe::testing {

// `e` at `values` (by variable); a kind outside those above fails the test
// and gives 0.
inline int64_t EvalIndex(const Expr& e,
                         const std::map<const ExprNode*, int64_t>& values) {
  auto floor_div = [](int64_t a, int64_t b) {
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
  };
  switch (e.kind()) {
    case ExprKind::kIntImm:
      return e.int_value();
    case ExprKind::kVar:
      return values.at(e.get());
    case ExprKind::kAdd:
      return EvalIndex(e.operand(0), values) + EvalIndex(e.operand(1), values);
    case ExprKind::kSub:
      return EvalIndex(e.operand(0), values) - EvalIndex(e.operand(1), values);
    case ExprKind::kMul:
      return EvalIndex(e.operand(0), values) * EvalIndex(e.operand(1), values);
    case ExprKind::kFloorDiv:
      return floor_div(EvalIndex(e.operand(0), values),
                       EvalIndex(e.operand(1), values));
    case ExprKind::kFloorMod: {
      const int64_t a = EvalIndex(e.operand(0), values);
      const int64_t b = EvalIndex(e.operand(1), values);
      return a - floor_div(a, b) * b;
    }
    default:
      ADD_FAILURE() << "no evaluation for " << e.ToString();
      return 0;
  }
}

}  // namespace lathe::testing
