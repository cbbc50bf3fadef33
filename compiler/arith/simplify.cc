#include "compiler/arith/simplify.h"

#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/arith/int_math.h"
#include "compiler/arith/linear_terms.h"
#include "compiler/ir/expr_equal.h"
#include "compiler/ir/expr_functor.h"

namespace lathe {
namespace {

Expr Rebuild(const LinearTerms& form, DType dtype) {
  Expr result;
  auto append = [&](Expr term, int64_t coef) {
    if (!result.defined()) {
      result = coef == 1 ? term
                         : (coef == -1 ? IntImm(0, dtype) - term
                                       : term * IntImm(coef, dtype));
      return;
    }
    if (coef > 0) {
      result = result + (coef == 1 ? term : term * IntImm(coef, dtype));
    } else {
      result = result - (coef == -1 ? term : term * IntImm(-coef, dtype));
    }
  };
  for (const auto& [atom, coef] : form.terms) {
    if (coef != 0) append(atom, coef);
  }
  if (!result.defined()) return IntImm(form.constant, dtype);
  if (form.constant > 0) return result + IntImm(form.constant, dtype);
  if (form.constant < 0) return result - IntImm(-form.constant, dtype);
  return result;
}

// A positive constant divisor of `e` (a floordiv or floormod by it), else 0.
int64_t ConstantDivisor(const Expr& e) {
  if (!e.is(ExprKind::kFloorDiv) && !e.is(ExprKind::kFloorMod)) return 0;
  if (!e.operand(1).is_int_imm() || e.operand(1).int_value() <= 0) return 0;
  return e.operand(1).int_value();
}

// A term read as (x % c) // b (b = 1: x % c), with positive constants.
struct Digit {
  Expr x;
  int64_t b = 1;
  int64_t c = 0;
};

// The readings of `low` as a digit: x % c, (x % c) // b, and (y // b) % a
// as (y % (a * b)) // b (for floor division, both are the digit of y in
// [b, a * b)); empty when it is none of these.
std::vector<Digit> ReadingsOfDigit(const Expr& low) {
  std::vector<Digit> readings;
  if (low.is(ExprKind::kFloorDiv)) {
    const int64_t b = ConstantDivisor(low);
    const Expr& mod = low.operand(0);
    if (b > 0 && mod.is(ExprKind::kFloorMod) && ConstantDivisor(mod) > 0)
      readings.push_back({mod.operand(0), b, ConstantDivisor(mod)});
  } else if (const int64_t a = ConstantDivisor(low);
             a > 0 && low.is(ExprKind::kFloorMod)) {
    const Expr& inner = low.operand(0);
    readings.push_back({inner, 1, a});
    const int64_t b = ConstantDivisor(inner);
    if (b > 0 && inner.is(ExprKind::kFloorDiv) &&
        a <= std::numeric_limits<int64_t>::max() / b) {
      readings.push_back({inner.operand(0), b, a * b});
    }
  }
  return readings;
}

// How many digits of x above c `high` holds, when it is x // c (0: all of
// them) or a digit of it, (x // c) % a or (x % (a * c)) // c (a); nullopt
// when it is neither (or a * c overflows).
std::optional<int64_t> DigitsAbove(const Expr& high, const Expr& x, int64_t c) {
  const Expr& dividend =
      high.is(ExprKind::kFloorDiv) || high.is(ExprKind::kFloorMod)
          ? high.operand(0)
          : high;
  int64_t above = -1;
  if (high.is(ExprKind::kFloorDiv) && ConstantDivisor(high) == c) {
    if (ExprEqual(dividend, x)) return 0;
    const int64_t m = ConstantDivisor(dividend);
    if (dividend.is(ExprKind::kFloorMod) && m > 0 && m % c == 0 &&
        ExprEqual(dividend.operand(0), x)) {
      above = m / c;
    }
  } else if (high.is(ExprKind::kFloorMod) && ConstantDivisor(high) > 0 &&
             dividend.is(ExprKind::kFloorDiv) &&
             ConstantDivisor(dividend) == c &&
             ExprEqual(dividend.operand(0), x)) {
    above = ConstantDivisor(high);
  }
  if (above <= 0 || above > std::numeric_limits<int64_t>::max() / c)
    return std::nullopt;
  return above;
}

// (x // C) * (k * C / b) + ((x % C) // b) * k == (x // b) * k for positive
// constants b dividing C (b = 1: (x // C) * C * k + (x % C) * k == x * k):
// the pairs of terms of `form` that a split and a fuse of its parts leave
// (the index of a loop split into [outer, a, b] whose a and b parts were
// fused again) are merged back; with three parts or more, the middle digits
// ((x // b) % a) merge with the one above first. The high term may be a
// digit itself, ((x // C) % a) or (x % M) // C (a = M / C): the pair is then
// the digits below a * C, ((x % (a * C)) // b) * k. Bounded: each merge removes
// two terms and adds at most one.
void RecombineDivMod(LinearTerms* form) {
  for (bool merged = true; merged;) {
    merged = false;
    for (size_t m = 0; m < form->terms.size() && !merged; ++m) {
      const Expr low = form->terms[m].first;
      const int64_t k = form->terms[m].second;
      if (k == 0) continue;
      // low is x % C (b = 1), (x % C) // b, or (x // b) % a, the same as
      // (x % C) // b with C = a * b (the middle digits of a fuse of three
      // or more parts); each reading is tried.
      for (const Digit& digit : ReadingsOfDigit(low)) {
        const Expr& x = digit.x;
        const int64_t b = digit.b, c = digit.c;
        if (c % b != 0) continue;
        for (size_t d = 0; d < form->terms.size(); ++d) {
          if (d == m || form->terms[d].second != k * (c / b)) continue;
          const std::optional<int64_t> above =
              DigitsAbove(form->terms[d].first, x, c);
          if (!above.has_value()) continue;
          form->terms[m].second = 0;
          form->terms[d].second = 0;
          if (*above > 0) {
            const Expr low_digits = FloorMod(x, IntImm(*above * c, x.dtype()));
            form->AddTerm(b == 1 ? low_digits
                                 : FloorDiv(low_digits, IntImm(b, x.dtype())),
                          k);
          } else if (b == 1) {
            CollectLinearTerms(x, k, form, EqualAtoms::kMerge);
          } else {
            form->AddTerm(FloorDiv(x, IntImm(b, x.dtype())), k);
          }
          merged = true;
          break;
        }
        if (merged) break;
      }
    }
  }
}

class Simplifier {
 public:
  explicit Simplifier(const VarRanges& ranges) : ranges_(ranges) {}

  Expr Visit(const Expr& e) {
    if (e->operands.empty()) return e;
    std::vector<Expr> ops;
    for (const Expr& op : e->operands) ops.push_back(Visit(op));
    Expr rebuilt = WithOperands(e, ops);
    if (!rebuilt.defined() || rebuilt->operands.empty()) return rebuilt;
    return Rewrite(rebuilt);
  }

 private:
  Expr Rewrite(const Expr& e) {
    DType t = e.dtype();
    switch (e.kind()) {
      case ExprKind::kAdd:
      case ExprKind::kSub:
      case ExprKind::kMul:
        if (t.is_int()) {
          LinearTerms form;
          CollectLinearTerms(e, 1, &form, EqualAtoms::kMerge);
          RecombineDivMod(&form);
          return Rebuild(form, t);
        }
        return e;
      case ExprKind::kFloorDiv:
        return RewriteDivMod(e, /*is_div=*/true);
      case ExprKind::kFloorMod:
        return RewriteDivMod(e, /*is_div=*/false);
      case ExprKind::kMin:
      case ExprKind::kMax: {
        if (!t.is_int()) return e;
        Interval d = BoundOf(Rewrite(e.operand(0) - e.operand(1)), ranges_);
        bool a_le_b =
            d.max != std::numeric_limits<int64_t>::max() && d.max <= 0;
        bool a_ge_b =
            d.min != std::numeric_limits<int64_t>::min() && d.min >= 0;
        if (e.kind() == ExprKind::kMin) {
          if (a_le_b) return e.operand(0);
          if (a_ge_b) return e.operand(1);
        } else {
          if (a_ge_b) return e.operand(0);
          if (a_le_b) return e.operand(1);
        }
        return e;
      }
      case ExprKind::kSelect: {
        Interval c = BoundOf(e.operand(0), ranges_);
        if (c.is_point()) return c.min ? e.operand(1) : e.operand(2);
        return e;
      }
      default:
        break;
    }
    if (IsComparison(e.kind()) && e.operand(0).dtype().is_int()) {
      Expr diff = Rewrite(e.operand(0) - e.operand(1));
      Interval d = BoundOf(diff, ranges_);
      Interval r =
          BoundOf(MakeBinary(e.kind(), diff, IntImm(0, diff.dtype())), ranges_);
      (void)d;
      if (r.is_point()) return IntImm(r.min, DType::Bool());
      return e;
    }
    if (e.dtype().is_bool()) {
      Interval r = BoundOf(e, ranges_);
      if (r.is_point()) return IntImm(r.min, DType::Bool());
    }
    return e;
  }

  Expr RewriteDivMod(const Expr& e, bool is_div) {
    const Expr& divisor = e.operand(1);
    if (!divisor.is_int_imm() || divisor.int_value() <= 0) return e;
    int64_t c = divisor.int_value();
    DType t = e.dtype();
    // floordiv(floordiv(x, a), b) == floordiv(x, a * b) for positive a, b.
    if (is_div && e.operand(0).is(ExprKind::kFloorDiv) &&
        e.operand(0).operand(1).is_int_imm() &&
        e.operand(0).operand(1).int_value() > 0) {
      return RewriteDivMod(
          FloorDiv(e.operand(0).operand(0),
                   IntImm(e.operand(0).operand(1).int_value() * c, t)),
          true);
    }
    // (x % C) % c == x % c when c divides C.
    if (!is_div && ConstantDivisor(e.operand(0)) > 0 &&
        e.operand(0).is(ExprKind::kFloorMod) &&
        ConstantDivisor(e.operand(0)) % c == 0) {
      return RewriteDivMod(FloorMod(e.operand(0).operand(0), divisor), false);
    }
    LinearTerms form;
    CollectLinearTerms(e.operand(0), 1, &form, EqualAtoms::kMerge);
    // (q * c + r) // c == q + r // c and (q * c + r) % c == r % c.
    LinearTerms quotient, rest;
    for (const auto& [atom, coef] : form.terms) {
      if (coef % c == 0) {
        quotient.AddTerm(atom, coef / c);
      } else {
        rest.AddTerm(atom, coef);
      }
    }
    quotient.constant = FloorDivInt(form.constant, c);
    rest.constant = form.constant - quotient.constant * c;
    Expr r = Rebuild(rest, t);
    Interval rb = BoundOf(r, ranges_);
    bool one_period =
        rb.is_bounded() && FloorDivInt(rb.min, c) == FloorDivInt(rb.max, c);
    if (is_div) {
      if (one_period) {
        quotient.constant += FloorDivInt(rb.min, c);
        return Rebuild(quotient, t);
      }
      Expr q = Rebuild(quotient, t);
      return q.is_int_imm() && q.int_value() == 0 ? FloorDiv(r, divisor)
                                                  : q + FloorDiv(r, divisor);
    }
    if (one_period) return Rewrite(r - IntImm(FloorDivInt(rb.min, c) * c, t));
    return FloorMod(r, divisor);
  }

  const VarRanges& ranges_;
};

}  // namespace

Expr Simplify(const Expr& expr, const VarRanges& ranges) {
  if (!expr.defined()) return expr;
  return Simplifier(ranges).Visit(expr);
}

}  // namespace lathe
