// The data-parallel analysis as it was before it was made fast
// (compiler/schedule/analysis/data_parallel.cc): the plain fixpoint, which
// renames and simplifies every equation again for every variable and every
// round. It shares the digits (index_digits.h), the accesses
// (loop_accesses.h) and the order check of a reorder with the analysis: only
// the fixpoint is its own. DataParallel.MatchesThePlainFixpoint checks that the
// fast analysis gives the same answers (a faster analysis must not change a
// verdict).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "compiler/arith/simplify.h"
#include "compiler/ir/expr_equal.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/analysis/data_parallel.h"
#include "compiler/schedule/analysis/index_digits.h"
#include "compiler/schedule/analysis/loop_accesses.h"
#include "compiler/schedule/analysis/loop_ranges.h"

namespace lathe::testing::plain {

// Whether the equations (pairs of index expressions of instance a and of
// instance b, the latter over the renamed variables) force var == rename(var).
// Equations of expressions that are themselves determined (the base of
// digits, e.g. a fused loop split again) are added as new equations.
inline bool EquationsDetermine(std::vector<std::pair<Expr, Expr>> work,
                               const Expr& var, const VarMap& rename,
                               const VarRanges& ranges) {
  const Expr& var_copy = rename.at(var);
  DigitFacts facts;
  for (size_t next = 0; next < work.size(); ++next) {
    if (work[next].first.dtype() != DType::Index() ||
        work[next].second.dtype() != DType::Index()) {
      continue;
    }
    Expr ea = Simplify(work[next].first, ranges);
    Expr eb = Simplify(work[next].second, ranges);
    Decomposed da = Decompose(ea, var);
    Decomposed db = Decompose(eb, var_copy);
    if (da.form != DigitForm::kDigit || db.form != DigitForm::kDigit ||
        !(da.digit == db.digit) || da.coef != db.coef ||
        !ExprEqual(db.base, Substitute(da.base, rename))) {
      continue;
    }
    Interval diff = BoundOf(Simplify(db.rest - da.rest, ranges), ranges);
    std::optional<std::pair<Expr, Expr>> settled =
        facts.Add(da, db.base, rename, diff, ranges);
    if (!settled.has_value()) continue;
    if (settled->first.same_as(var)) return true;
    work.emplace_back(settled->first, settled->second);
  }
  return false;
}

// The variables of `varying` that any two executions of a and b touching
// the same element must give equal values (the others may differ). Starts
// with all free; each proven variable is then held equal, which may prove
// more (j_0 * 2 + j_1: j_0 first, then j_1).
inline std::set<const ExprNode*> DeterminedVars(
    const LoopAccess& a, const LoopAccess& b, const std::vector<Expr>& varying,
    const VarRanges& ranges) {
  std::set<const ExprNode*> known;
  if (a.buffer != b.buffer) {
    for (const Expr& v : varying) known.insert(v.get());
    return known;
  }
  if (a.indices.size() != b.indices.size()) return known;
  for (bool changed = true; changed;) {
    changed = false;
    // b's instance: fresh copies of the variables not yet known equal.
    VarRanges all = ranges;
    VarMap rename;
    for (const Expr& v : varying) {
      if (known.count(v.get())) continue;
      Expr copy = Var(v->name + "'", v.dtype());
      rename[v] = copy;
      auto r = ranges.find(v.get());
      if (r != ranges.end()) all[copy.get()] = r->second;
    }
    std::vector<std::pair<Expr, Expr>> equations;
    for (size_t d = 0; d < a.indices.size(); ++d) {
      equations.emplace_back(a.indices[d], Substitute(b.indices[d], rename));
    }
    for (const Expr& v : varying) {
      if (known.count(v.get())) continue;
      auto r = ranges.find(v.get());
      bool single = r != ranges.end() && r->second.is_point();
      if (single || EquationsDetermine(equations, v, rename, all)) {
        known.insert(v.get());
        changed = true;
        break;  // rename again with v held equal
      }
    }
  }
  return known;
}

// CheckReorderKeepsDependences over DeterminedVars.
inline absl::Status CheckReorderKeepsDependences(
    const Program& program, const std::vector<const ForNode*>& span,
    const std::vector<const ForNode*>& new_order) {
  if (span.empty()) return absl::OkStatus();
  ReorderCheck check(program, span, new_order);
  return check.Run([&](const LoopAccess& x, const LoopAccess& w) {
    return DeterminedVars(x, w, check.varying(), check.ranges());
  });
}

}  // namespace lathe::testing::plain
