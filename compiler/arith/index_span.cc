#include "compiler/arith/index_span.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/arith/int_math.h"
#include "compiler/arith/linear_terms.h"
#include "compiler/arith/simplify.h"
#include "compiler/ir/expr_functor.h"

namespace lathe {
namespace {

class SpanBuilder {
 public:
  SpanBuilder(const VarRanges& varying, const VarRanges& fixed,
              FloorDivMin floordiv_min)
      : varying_(varying), fixed_(fixed), floordiv_min_(floordiv_min) {}

  absl::StatusOr<IndexSpan> Of(const Expr& index) {
    LinearTerms terms;
    CollectLinearTerms(index, 1, &terms);
    IndexSpan span;
    Expr fixed_sum = IntImm(terms.constant);
    // Step sets of the varying terms: a term contributes {0, s, .., s(n-1)}
    // (shifted); their sum is contiguous when, in order of step, each step is
    // at most one more than the reach of the smaller ones.
    std::vector<std::pair<int64_t, int64_t>> steps;
    bool exact = true;
    for (const auto& [atom, coef] : terms.terms) {
      if (coef == 0) continue;
      std::set<const ExprNode*> vars = VaryingVarsOf(atom);
      if (vars.empty()) {
        fixed_sum = fixed_sum + atom * IntImm(coef);
        continue;
      }
      // The sum of the terms' value sets is their sumset only when the terms
      // vary independently (no variable in two of them).
      for (const ExprNode* var : vars) {
        if (!span.varying_vars.insert(var).second) exact = false;
      }
      int64_t abs_coef = coef < 0 ? -coef : coef;
      if (atom.is_var()) {
        int64_t n =
            varying_.at(atom.get()).max - varying_.at(atom.get()).min + 1;
        int64_t lo = varying_.at(atom.get()).min;
        // coef * x for x in [lo, lo + n - 1].
        int64_t min = coef > 0 ? coef * lo : coef * (lo + n - 1);
        fixed_sum = fixed_sum + IntImm(min);
        span.width += abs_coef * (n - 1);
        if (n > 1) steps.emplace_back(abs_coef, n);
        continue;
      }
      // floordiv / floormod by a positive constant: from the argument's span.
      if ((atom.is(ExprKind::kFloorDiv) || atom.is(ExprKind::kFloorMod)) &&
          atom.operand(1).is_int_imm() && atom.operand(1).int_value() > 0) {
        int64_t c = atom.operand(1).int_value();
        LATHE_ASSIGN_OR_RETURN(IndexSpan inner, Of(atom.operand(0)));
        Expr rem = Simplify(FloorMod(inner.min, IntImm(c)), fixed_);
        Expr lo;        // the least value of the atom
        int64_t count;  // how many values it takes (at most)
        bool atom_exact;
        if (atom.is(ExprKind::kFloorDiv)) {
          lo = FloorDiv(inner.min, IntImm(c));
          if (floordiv_min_ == FloorDivMin::kSimplifiedAlone) {
            lo = Simplify(lo, fixed_);
          }
          if (rem.is_int_imm()) {
            count = FloorDivInt(rem.int_value() + inner.width, c) + 1;
            atom_exact = inner.exact;
          } else {
            count = FloorDivInt(inner.width + c - 1, c) + 1;
            atom_exact = false;
          }
        } else if (rem.is_int_imm() && rem.int_value() + inner.width < c) {
          // No wrap-around: a shifted copy of the argument.
          lo = rem;
          count = inner.width + 1;
          atom_exact = inner.exact;
        } else {
          lo = IntImm(0);
          count = c;
          atom_exact = inner.exact && inner.width + 1 >= c;
        }
        Expr least = coef > 0 ? lo * IntImm(coef)
                              : (lo + IntImm(count - 1)) * IntImm(coef);
        fixed_sum = fixed_sum + least;
        span.width += abs_coef * (count - 1);
        if (!atom_exact || abs_coef != 1) {
          exact = false;
        } else if (count > 1) {
          steps.emplace_back(1, count);
        }
        continue;
      }
      if (!UsesFixedVar(atom)) {
        Interval b = BoundOf(atom, varying_);
        if (!b.is_bounded()) return Fail(index);
        fixed_sum = fixed_sum + IntImm(coef > 0 ? coef * b.min : coef * b.max);
        span.width += abs_coef * (b.max - b.min);
        exact = false;  // BoundOf may be wider than the values
        continue;
      }
      return Fail(index);
    }
    std::sort(steps.begin(), steps.end());
    int64_t reach = 0;
    for (const auto& [step, n] : steps) {
      if (step > reach + 1) exact = false;
      reach += step * (n - 1);
    }
    span.min = Simplify(fixed_sum, fixed_);
    span.exact = exact;
    return span;
  }

 private:
  std::set<const ExprNode*> VaryingVarsOf(const Expr& e) const {
    std::set<const ExprNode*> vars;
    VisitExpr(e, [&](const Expr& x) {
      if (x.is_var() && varying_.count(x.get())) vars.insert(x.get());
    });
    return vars;
  }
  bool UsesFixedVar(const Expr& e) const {
    return UsesAnyVar(e,
                      [&](const Expr& v) { return !varying_.count(v.get()); });
  }
  static absl::Status Fail(const Expr& index) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot infer the region of index ", index.ToString()));
  }

  const VarRanges& varying_;
  const VarRanges& fixed_;
  FloorDivMin floordiv_min_;
};

}  // namespace

absl::StatusOr<IndexSpan> SpanOfIndex(const Expr& index,
                                      const VarRanges& varying,
                                      const VarRanges& fixed,
                                      FloorDivMin floordiv_min) {
  return SpanBuilder(varying, fixed, floordiv_min).Of(index);
}

std::optional<IndexSpan> JoinSpans(const IndexSpan& a, const IndexSpan& b,
                                   const VarRanges& fixed,
                                   JoinedMin joined_min) {
  Expr diff = Simplify(b.min - a.min, fixed);
  Interval delta = diff.is_int_imm() ? Interval::Point(diff.int_value())
                                     : BoundOf(diff, fixed);
  if (!delta.is_bounded()) return std::nullopt;
  // Relative to a.min: a covers [0, a.width], b lies within
  // [delta.min, delta.max + b.width].
  int64_t lo = std::min<int64_t>(0, delta.min);
  int64_t hi = std::max<int64_t>(a.width, delta.max + b.width);
  IndexSpan out;
  out.width = hi - lo;
  out.exact = a.exact && b.exact && delta.is_point() && delta.min == 0 &&
              a.width == b.width;
  out.varying_vars = a.varying_vars;
  out.varying_vars.insert(b.varying_vars.begin(), b.varying_vars.end());
  if (joined_min == JoinedMin::kSecondWhenConstantlyBelow && delta.is_point() &&
      delta.min < 0) {
    out.min = b.min;
  } else {
    out.min = lo == 0 ? a.min : Simplify(a.min + IntImm(lo), fixed);
  }
  return out;
}

}  // namespace lathe
