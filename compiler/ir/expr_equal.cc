#include "compiler/ir/expr_equal.h"

#include <cstring>

namespace lathe {

bool ExprEqual(const Expr& a, const Expr& b, FloatImmEquality floats) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  const ExprNode& x = *a.get();
  const ExprNode& y = *b.get();
  if (x.kind != y.kind || x.dtype != y.dtype) return false;
  switch (x.kind) {
    case ExprKind::kVar:
      return false;  // distinct nodes are distinct variables
    case ExprKind::kIntImm:
      return x.int_value == y.int_value;
    case ExprKind::kFloatImm:
      if (floats == FloatImmEquality::kByBits) {
        return std::memcmp(&x.float_value, &y.float_value, sizeof(double)) == 0;
      }
      return x.float_value == y.float_value;
    case ExprKind::kCall:
      if (x.name != y.name) return false;
      break;
    case ExprKind::kLoad:
      if (x.buffer != y.buffer) return false;
      break;
    default:
      break;
  }
  if (x.operands.size() != y.operands.size()) return false;
  for (size_t i = 0; i < x.operands.size(); ++i) {
    if (!ExprEqual(x.operands[i], y.operands[i], floats)) return false;
  }
  return true;
}

bool ExprsEqual(const std::vector<Expr>& a, const std::vector<Expr>& b,
                FloatImmEquality floats) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!ExprEqual(a[i], b[i], floats)) return false;
  }
  return true;
}

}  // namespace lathe
