// Integer expressions as sum(coefficient * atom) + constant.
//
// Sums, differences and products by constants are expanded; every other
// subexpression (a variable, a floordiv, a load, ...) is an atom, kept in
// order of appearance and not merged with equal atoms. Region and bound
// analyses use it to see how an index moves with each loop variable.
// Tests: tests/compiler/arith/linear_terms_test.cc.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "compiler/ir/expr.h"

namespace lathe {

struct LinearTerms {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;
};

// Adds scale * e to out.
void CollectLinearTerms(const Expr& e, int64_t scale, LinearTerms* out);

}  // namespace lathe
