#include "compiler/schedule/analysis/block_predicate.h"

#include "compiler/arith/simplify.h"
#include "compiler/ir/expr_equal.h"
#include "compiler/ir/expr_functor.h"

namespace lathe {

std::vector<Expr> Conjuncts(const Expr& cond) {
  if (cond.is(ExprKind::kAnd)) {
    std::vector<Expr> result = Conjuncts(cond.operand(0));
    for (const Expr& c : Conjuncts(cond.operand(1))) result.push_back(c);
    return result;
  }
  if (cond.is(ExprKind::kIntImm) && cond.int_value() != 0) return {};  // true
  return {cond};
}

int TailGuardedIterVar(const BlockNode& block, const Expr& conjunct,
                       const VarRanges& ranges) {
  VarMap bindings;
  for (size_t i = 0; i < block.iter_vars.size(); ++i) {
    bindings[block.iter_vars[i].var] = block.iter_values[i];
  }
  Expr c = Substitute(conjunct, bindings);
  if (!c.is(ExprKind::kLt) || !c.operand(1).is_int_imm()) return -1;
  Expr lhs = Simplify(c.operand(0), ranges);
  for (size_t i = 0; i < block.iter_vars.size(); ++i) {
    if (block.iter_vars[i].extent != c.operand(1).int_value()) continue;
    if (ExprEqual(lhs, Simplify(block.iter_values[i], ranges)))
      return static_cast<int>(i);
  }
  return -1;
}

}  // namespace lathe
