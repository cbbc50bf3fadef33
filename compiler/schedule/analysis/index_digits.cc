#include "compiler/schedule/analysis/index_digits.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "compiler/arith/linear_terms.h"
#include "compiler/arith/simplify.h"
#include "compiler/ir/expr_equal.h"
#include "compiler/ir/expr_functor.h"

namespace lathe {

namespace {

// One level of MatchDigit: `atom` as a digit of the expression it divides
// or reduces (a variable is its own digit).
bool MatchOneDigit(const Expr& atom, Expr* base, Digit* digit) {
  auto positive_imm = [](const Expr& e) {
    return e.is_int_imm() && e.int_value() > 0;
  };
  if (atom.is_var()) {
    *base = atom;
    *digit = {1, 0};
    return true;
  }
  if (atom.is(ExprKind::kFloorDiv) && positive_imm(atom.operand(1))) {
    *base = atom.operand(0);
    *digit = {atom.operand(1).int_value(), 0};
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

}  // namespace

// A digit of some expression `base` that mentions the variable: base itself
// (a variable), base // a, base % b, (base // a) % b or (base % m) // a with a
// dividing m. `base` is the variable, or a sum of several (a fused loop split
// again: (f_0 * 8 + f_1) // 10).
bool MatchDigit(const Expr& atom, Expr* base, Digit* digit) {
  if (!MatchOneDigit(atom, base, digit)) return false;
  // A digit of y % m below m is that digit of y: ((y % m) // a) % b is
  // (y // a) % b when a * b divides m, and (y % m) // a is (y // a) % (m /
  // a) when a divides m.
  while (base->is(ExprKind::kFloorMod) && base->operand(1).is_int_imm() &&
         base->operand(1).int_value() > 0) {
    const int64_t m = base->operand(1).int_value();
    int64_t ab;
    if (digit->b > 0) {
      if (__builtin_mul_overflow(digit->a, digit->b, &ab) || m % ab != 0) break;
    } else {
      if (m % digit->a != 0) break;
      digit->b = m / digit->a;
    }
    *base = base->operand(0);
  }
  return true;
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

namespace {

// Whether every coefficient of e's linear terms, and its constant, is a
// multiple of m (e's atoms are integers: e is then one too).
bool IsMultipleOf(const Expr& e, int64_t m) {
  LinearTerms lin;
  CollectLinearTerms(e, 1, &lin, EqualAtoms::kMerge);
  if (lin.overflowed || lin.constant % m != 0) return false;
  for (const auto& [atom, coef] : lin.terms) {
    if (coef % m != 0) return false;
  }
  return true;
}

}  // namespace

std::optional<Digit> DigitOfOtherBase(const Expr& from, const Digit& digit,
                                      const Expr& to, const VarRanges& ranges) {
  // q: 1, or a divisor of one of from's atoms (x // q of a sum with a step
  // divisible by q simplifies into the sum's terms divided: from).
  std::vector<int64_t> quotients = {1};
  VisitExpr(from, [&](const Expr& e) {
    if (e.is(ExprKind::kFloorDiv) && e.operand(1).is_int_imm() &&
        e.operand(1).int_value() > 1 &&
        std::find(quotients.begin(), quotients.end(),
                  e.operand(1).int_value()) == quotients.end()) {
      quotients.push_back(e.operand(1).int_value());
    }
  });
  int64_t ab = 0;
  const bool modular =
      digit.b > 0 && !__builtin_mul_overflow(digit.a, digit.b, &ab);
  for (int64_t q : quotients) {
    const Expr quotient =
        q == 1 ? to : Simplify(FloorDiv(to, IntImm(q)), ranges);
    // (from // a) % b == ((to // q) // a) % b == (to // (q * a)) % b when
    // to // q is from, or differs from it by a multiple of a * b.
    if (!ExprEqual(quotient, from) &&
        !(modular && IsMultipleOf(Simplify(quotient - from, ranges), ab))) {
      continue;
    }
    int64_t qa;
    if (__builtin_mul_overflow(q, digit.a, &qa)) continue;
    return Digit{qa, digit.b};
  }
  return std::nullopt;
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
  // A digit may be read as one of another base too: the simplifier splits
  // the digits of one sum into sums of their own ((o * 56 + f) // 2 % 3
  // becomes (o * 28 + f // 2) % 3, and (o * 56 + f) % 2 becomes f % 2).
  if (entry == nullptr) {
    entries_.push_back({da.base, base_b, {}, false});
    entry = &entries_.back();
    for (const Entry& other : entries_) {
      if (&other == entry) continue;
      for (const Digit& d : other.facts) {
        if (std::optional<Digit> m =
                DigitOfOtherBase(other.base_a, d, entry->base_a, ranges)) {
          entry->facts.push_back(*m);
        }
      }
    }
  }
  if (entry->settled) return std::nullopt;
  entry->facts.push_back(da.digit);
  if (Settles(*entry, rename, ranges))
    return std::make_pair(entry->base_a, entry->base_b);
  for (Entry& other : entries_) {
    if (&other == entry || other.settled) continue;
    std::optional<Digit> m =
        DigitOfOtherBase(entry->base_a, da.digit, other.base_a, ranges);
    if (!m.has_value()) continue;
    other.facts.push_back(*m);
    if (Settles(other, rename, ranges))
      return std::make_pair(other.base_a, other.base_b);
  }
  return std::nullopt;
}

// Whether the entry's facts settle its base (see Add), marking it so.
bool DigitFacts::Settles(Entry& entry, const VarMap& rename,
                         const VarRanges& ranges) {
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
           DigitsDetermine(entry.facts, width + 1);
  };
  if (!settles(BoundOf(entry.base_a, ranges), /*symmetric=*/false) &&
      !settles(BoundOf(Simplify(Substitute(entry.base_b, rename) - entry.base_a,
                                ranges),
                       ranges),
               /*symmetric=*/true)) {
    return false;
  }
  entry.settled = true;
  return true;
}

}  // namespace lathe
