// Integer expressions as sum(coefficient * atom) + constant.
//
// Sums, differences and products by constants are expanded; every other
// subexpression (a variable, a floordiv, a load, ...) is an atom, in order
// of first appearance. Equal atoms (ExprEqual, compiler/ir/expr_equal.h) are
// either kept apart, one term per occurrence (region and bound analyses,
// which look at each occurrence), or merged into one term whose coefficient
// is the sum (the simplifier's canonical form, the data-parallel analysis's
// digits); merged coefficients may become 0 and stay in the list.
//
// Arithmetic on the constant and the coefficients wraps around on int64
// overflow and sets `overflowed`, for callers that must not trust a wrapped
// value (the data-parallel analysis then proves nothing); integer arithmetic
// of the shapes Lathe accepts never overflows.
// Tests: tests/compiler/arith/linear_terms_test.cc.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "compiler/ir/expr.h"

namespace lathe {

enum class EqualAtoms { kKeepApart, kMerge };

struct LinearTerms {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;
  bool overflowed = false;

  // Adds coef * atom as one term: merged into the term of an equal atom when
  // there is one (kMerge), else appended.
  void AddTerm(const Expr& atom, int64_t coef,
               EqualAtoms atoms = EqualAtoms::kMerge);
};

// Adds scale * e to out.
void CollectLinearTerms(const Expr& e, int64_t scale, LinearTerms* out,
                        EqualAtoms atoms = EqualAtoms::kKeepApart);

}  // namespace lathe
