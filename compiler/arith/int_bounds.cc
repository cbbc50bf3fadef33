#include "compiler/arith/int_bounds.h"

#include <algorithm>

#include "compiler/arith/int_math.h"
#include "compiler/arith/simplify.h"

namespace lathe {
namespace {

constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();

bool IsInf(int64_t v) { return v == kNegInf || v == kPosInf; }

int64_t SatAdd(int64_t a, int64_t b) {
  if (a == kNegInf || b == kNegInf) return kNegInf;
  if (a == kPosInf || b == kPosInf) return kPosInf;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return a > 0 ? kPosInf : kNegInf;
  return r;
}

int64_t SatMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  bool negative = (a < 0) != (b < 0);
  if (IsInf(a) || IsInf(b)) return negative ? kNegInf : kPosInf;
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return negative ? kNegInf : kPosInf;
  return r;
}

Interval Unbounded() { return Interval{}; }

Interval Bool() { return {0, 1}; }

Interval Compare(ExprKind kind, const Interval& a, const Interval& b) {
  // The sign of a - b decides the comparison when the intervals do not overlap.
  bool lt_always = a.max != kPosInf && b.min != kNegInf && a.max < b.min;
  bool le_always = a.max != kPosInf && b.min != kNegInf && a.max <= b.min;
  bool gt_always = a.min != kNegInf && b.max != kPosInf && a.min > b.max;
  bool ge_always = a.min != kNegInf && b.max != kPosInf && a.min >= b.max;
  bool eq_always = a.is_point() && b.is_point() && a.min == b.min;
  switch (kind) {
    case ExprKind::kLt:
      if (lt_always) return Interval::Point(1);
      if (ge_always) return Interval::Point(0);
      break;
    case ExprKind::kLe:
      if (le_always) return Interval::Point(1);
      if (gt_always) return Interval::Point(0);
      break;
    case ExprKind::kGt:
      if (gt_always) return Interval::Point(1);
      if (le_always) return Interval::Point(0);
      break;
    case ExprKind::kGe:
      if (ge_always) return Interval::Point(1);
      if (lt_always) return Interval::Point(0);
      break;
    case ExprKind::kEq:
      if (eq_always) return Interval::Point(1);
      if (lt_always || gt_always) return Interval::Point(0);
      break;
    case ExprKind::kNe:
      if (eq_always) return Interval::Point(0);
      if (lt_always || gt_always) return Interval::Point(1);
      break;
    default:
      break;
  }
  return Bool();
}

}  // namespace

Interval BoundOf(const Expr& expr, const VarRanges& ranges) {
  const ExprNode& n = *expr.get();
  if (!n.dtype.is_int() && !n.dtype.is_bool()) return Unbounded();
  auto sub = [&](size_t i) { return BoundOf(n.operands[i], ranges); };
  switch (n.kind) {
    case ExprKind::kIntImm:
      return Interval::Point(n.int_value);
    case ExprKind::kVar: {
      auto it = ranges.find(expr.get());
      return it == ranges.end() ? Unbounded() : it->second;
    }
    case ExprKind::kAdd: {
      Interval a = sub(0), b = sub(1);
      return {SatAdd(a.min, b.min), SatAdd(a.max, b.max)};
    }
    case ExprKind::kSub: {
      Interval a = sub(0), b = sub(1);
      return {SatAdd(a.min, SatMul(b.max, -1)),
              SatAdd(a.max, SatMul(b.min, -1))};
    }
    case ExprKind::kMul: {
      Interval a = sub(0), b = sub(1);
      int64_t c[4] = {SatMul(a.min, b.min), SatMul(a.min, b.max),
                      SatMul(a.max, b.min), SatMul(a.max, b.max)};
      return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
    }
    case ExprKind::kFloorDiv: {
      Interval a = sub(0), b = sub(1);
      if (b.is_point() && b.min > 0) {
        return {FloorDivInt(a.min, b.min), FloorDivInt(a.max, b.min)};
      }
      return Unbounded();
    }
    case ExprKind::kFloorMod: {
      Interval a = sub(0), b = sub(1);
      if (b.is_point() && b.min > 0) {
        int64_t c = b.min;
        // Within one period the result is a shifted copy of the operand.
        if (a.is_bounded() && FloorDivInt(a.min, c) == FloorDivInt(a.max, c)) {
          int64_t base = FloorDivInt(a.min, c) * c;
          return {a.min - base, a.max - base};
        }
        return {0, c - 1};
      }
      return Unbounded();
    }
    case ExprKind::kMin: {
      Interval a = sub(0), b = sub(1);
      return {std::min(a.min, b.min), std::min(a.max, b.max)};
    }
    case ExprKind::kMax: {
      Interval a = sub(0), b = sub(1);
      return {std::max(a.min, b.min), std::max(a.max, b.max)};
    }
    case ExprKind::kSelect: {
      Interval c = sub(0), a = sub(1), b = sub(2);
      if (c.is_point()) return c.min ? a : b;
      return {std::min(a.min, b.min), std::max(a.max, b.max)};
    }
    case ExprKind::kCast:
      if (n.operands[0].dtype().is_int() || n.operands[0].dtype().is_bool()) {
        return sub(0);
      }
      return Unbounded();
    case ExprKind::kAnd: {
      Interval a = sub(0), b = sub(1);
      if (a.is_point() && b.is_point()) return Interval::Point(a.min && b.min);
      if ((a.is_point() && !a.min) || (b.is_point() && !b.min))
        return Interval::Point(0);
      return Bool();
    }
    case ExprKind::kOr: {
      Interval a = sub(0), b = sub(1);
      if (a.is_point() && b.is_point()) return Interval::Point(a.min || b.min);
      if ((a.is_point() && a.min) || (b.is_point() && b.min))
        return Interval::Point(1);
      return Bool();
    }
    case ExprKind::kNot: {
      Interval a = sub(0);
      if (a.is_point()) return Interval::Point(!a.min);
      return Bool();
    }
    default:
      if (IsComparison(n.kind)) {
        if (!n.operands[0].dtype().is_int()) return Bool();
        // Compare through the difference so that shared terms cancel.
        Interval diff =
            BoundOf(Simplify(n.operands[0] - n.operands[1], ranges), ranges);
        return Compare(n.kind, diff, Interval::Point(0));
      }
      return n.dtype.is_bool() ? Bool() : Unbounded();
  }
}

bool ProvablyTrue(const Expr& cond, const VarRanges& ranges) {
  Interval b = BoundOf(cond, ranges);
  return b.min >= 1;
}

bool ProvablyFalse(const Expr& cond, const VarRanges& ranges) {
  Interval b = BoundOf(cond, ranges);
  return b.max <= 0;
}

}  // namespace lathe
