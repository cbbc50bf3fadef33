#include "compiler/schedule/analysis/index_digits.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "compiler/arith/linear_terms.h"
#include "compiler/arith/simplify.h"
#include "compiler/ir/expr_equal.h"
#include "compiler/ir/expr_functor.h"

namespace lathe {

// A digit of some expression `base` that mentions the variable: base itself
// (a variable), base // a, base % b, (base // a) % b or (base % m) // a with a
// dividing m. `base` is the variable, or a sum of several (a fused loop split
// again: (f_0 * 8 + f_1) // 10).
bool MatchDigit(const Expr& atom, Expr* base, Digit* digit) {
  auto positive_imm = [](const Expr& e) {
    return e.is_int_imm() && e.int_value() > 0;
  };
  if (atom.is_var()) {
    *base = atom;
    *digit = {1, 0};
    return true;
  }
  if (atom.is(ExprKind::kFloorDiv) && positive_imm(atom.operand(1))) {
    const Expr& x = atom.operand(0);
    int64_t a = atom.operand(1).int_value();
    if (x.is(ExprKind::kFloorMod) && positive_imm(x.operand(1)) &&
        x.operand(1).int_value() % a == 0) {
      *base = x.operand(0);
      *digit = {a, x.operand(1).int_value() / a};
      return true;
    }
    *base = x;
    *digit = {a, 0};
    return true;
  }
  if (atom.is(ExprKind::kFloorMod) && positive_imm(atom.operand(1))) {
    const Expr& x = atom.operand(0);
    int64_t b = atom.operand(1).int_value();
    if (x.is(ExprKind::kFloorDiv) && positive_imm(x.operand(1))) {
      *base = x.operand(0);
      *digit = {x.operand(1).int_value(), b};
      return true;
    }
    *base = x;
    *digit = {1, b};
    return true;
  }
  return false;
}

// Writes e as coef * digit(base) + rest, where var occurs only in base.
Decomposed Decompose(const Expr& e, const Expr& var) {
  Decomposed d;
  if (!UsesVar(e, var)) {
    d.form = DigitForm::kAbsent;
    return d;
  }
  LinearTerms lin;
  CollectLinearTerms(e, 1, &lin, EqualAtoms::kMerge);
  if (lin.overflowed) return d;
  int found = -1;
  for (size_t i = 0; i < lin.terms.size(); ++i) {
    if (lin.terms[i].second == 0 || !UsesVar(lin.terms[i].first, var)) continue;
    if (found >= 0) return d;  // var in two terms
    found = static_cast<int>(i);
  }
  if (found < 0) {
    d.form = DigitForm::kAbsent;  // its terms cancelled
    return d;
  }
  if (!MatchDigit(lin.terms[found].first, &d.base, &d.digit) ||
      !UsesVar(d.base, var)) {
    return d;
  }
  d.coef = lin.terms[found].second;
  d.form = DigitForm::kDigit;
  Expr rest = IntImm(lin.constant);
  for (size_t i = 0; i < lin.terms.size(); ++i) {
    if (static_cast<int>(i) == found || lin.terms[i].second == 0) continue;
    rest = rest + lin.terms[i].first * IntImm(lin.terms[i].second);
  }
  d.rest = rest;
  return d;
}

// Whether knowing (x // a) % b == (x' // a) % b for every fact determines x,
// for x and x' in an interval of `span` values.
bool DigitsDetermine(const std::vector<Digit>& facts, int64_t span) {
  // Invariant: x == x' (mod known). A fact (a, b) with a dividing known adds
  // x == x' (mod a * b) (floor division makes this hold for negative values
  // too); b == 0 settles x. known >= span settles it as well.
  int64_t known = 1;
  bool changed = true;
  while (known < span && changed) {
    changed = false;
    for (const Digit& f : facts) {
      if (known % f.a != 0) continue;
      if (f.b == 0) return true;
      int64_t ab;
      if (__builtin_mul_overflow(f.a, f.b, &ab) || ab >= span) return true;
      int64_t next = std::lcm(known, ab);
      if (next > known) {
        known = next;
        changed = true;
      }
    }
  }
  return known >= span;
}

std::optional<std::pair<Expr, Expr>> DigitFacts::Add(const Decomposed& da,
                                                     const Expr& base_b,
                                                     const VarMap& rename,
                                                     const Interval& diff,
                                                     const VarRanges& ranges) {
  // coef * (digit - digit') == rest' - rest: |rest' - rest| < |coef| forces
  // equal digits.
  int64_t c = da.coef < 0 ? -da.coef : da.coef;
  if (!diff.is_bounded() || diff.min <= -c || diff.max >= c) {
    return std::nullopt;
  }
  Entry* entry = nullptr;
  for (Entry& e : entries_) {
    if (ExprEqual(e.base_a, da.base)) entry = &e;
  }
  if (entry == nullptr) {
    entries_.push_back({da.base, base_b, {}, false});
    entry = &entries_.back();
  }
  if (entry->settled) return std::nullopt;
  entry->facts.push_back(da.digit);
  // x - x' lies within (-span, span): the base's own range, else what
  // their difference spans once the parts both instances share cancel.
  auto settles = [&](const Interval& range, bool symmetric) {
    if (!range.is_bounded()) return false;
    int64_t width;
    if (symmetric) {
      if (range.min == std::numeric_limits<int64_t>::min()) return false;
      width = std::max(range.max, -range.min);
    } else if (__builtin_sub_overflow(range.max, range.min, &width)) {
      return false;
    }
    return width < std::numeric_limits<int64_t>::max() &&
           DigitsDetermine(entry->facts, width + 1);
  };
  if (!settles(BoundOf(da.base, ranges), /*symmetric=*/false) &&
      !settles(BoundOf(Simplify(Substitute(base_b, rename) - da.base, ranges),
                       ranges),
               /*symmetric=*/true)) {
    return std::nullopt;
  }
  entry->settled = true;
  return std::make_pair(entry->base_a, entry->base_b);
}

}  // namespace lathe
