#include "compiler/ir/expr_functor.h"

#include "base/check.h"
#include "compiler/ir/buffer.h"

namespace lathe {

void VisitExpr(const Expr& expr, const std::function<void(const Expr&)>& fn) {
  if (!expr.defined()) return;
  for (const Expr& operand : expr->operands) VisitExpr(operand, fn);
  fn(expr);
}

Expr WithOperands(const Expr& expr, std::vector<Expr> operands) {
  const ExprNode& n = *expr.get();
  switch (n.kind) {
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
    case ExprKind::kVar:
      return expr;
    case ExprKind::kNot:
      return Not(operands[0]);
    case ExprKind::kAnd:
      return And(operands[0], operands[1]);
    case ExprKind::kOr:
      return Or(operands[0], operands[1]);
    case ExprKind::kSelect:
      return Select(operands[0], operands[1], operands[2]);
    case ExprKind::kCast:
      return Cast(n.dtype, operands[0]);
    case ExprKind::kCall:
      return Call(n.name, std::move(operands), n.dtype);
    case ExprKind::kLoad:
      return Load(n.buffer, std::move(operands));
    default:
      LATHE_CHECK(operands.size() == 2, "binary node with ", operands.size(),
                  " operands");
      return MakeBinary(n.kind, operands[0], operands[1]);
  }
}

Expr MutateExpr(const Expr& expr, const std::function<Expr(const Expr&)>& fn) {
  if (!expr.defined()) return expr;
  const auto& old_operands = expr->operands;
  if (old_operands.empty()) return fn(expr);
  std::vector<Expr> operands;
  operands.reserve(old_operands.size());
  bool changed = false;
  for (const Expr& operand : old_operands) {
    operands.push_back(MutateExpr(operand, fn));
    changed |= !operands.back().same_as(operand);
  }
  return fn(changed ? WithOperands(expr, std::move(operands)) : expr);
}

Expr Substitute(const Expr& expr, const VarMap& map) {
  if (map.empty()) return expr;
  return MutateExpr(expr, [&](const Expr& e) {
    if (e.is_var()) {
      auto it = map.find(e);
      if (it != map.end()) return it->second;
    }
    return e;
  });
}

bool UsesVar(const Expr& expr, const Expr& var) {
  return UsesAnyVar(expr, [&](const Expr& v) { return v.same_as(var); });
}

bool UsesAnyVar(const Expr& expr,
                const std::function<bool(const Expr&)>& pred) {
  bool found = false;
  VisitExpr(expr, [&](const Expr& e) {
    if (!found && e.is_var() && pred(e)) found = true;
  });
  return found;
}

bool ReadsBuffer(const Expr& expr, const Buffer* buffer) {
  bool found = false;
  VisitExpr(expr, [&](const Expr& e) {
    if (e.is(ExprKind::kLoad) && e->buffer.get() == buffer) found = true;
  });
  return found;
}

}  // namespace lathe
