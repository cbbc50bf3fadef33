#include "compiler/schedule/analysis/inlined_size.h"

#include <algorithm>

namespace lathe {
namespace {

// Adds the tree nodes of `expr` to *count, stopping once it passes `cap`.
// Recursion follows the tree's depth, which the expression parser and
// these limits bound.
void CountTree(const Expr& expr, int64_t cap, int64_t* count) {
  if (!expr.defined() || *count > cap) return;
  ++*count;
  for (const Expr& operand : expr->operands) CountTree(operand, cap, count);
}

void CountVarUses(const Expr& expr, int64_t cap, int64_t* count) {
  if (!expr.defined() || *count > cap) return;
  if (expr.is_var()) ++*count;
  for (const Expr& operand : expr->operands) CountVarUses(operand, cap, count);
}

struct InlinedCount {
  const Buffer* buffer;
  int64_t value_nodes;
  int64_t value_var_uses;
  int64_t cap;

  void Count(const Expr& expr, int64_t* count) const {
    if (!expr.defined() || *count > cap) return;
    if (expr.is(ExprKind::kLoad) && expr->buffer.get() == buffer) {
      int64_t index_nodes = 0;
      for (const Expr& index : expr->operands) {
        CountTree(index, cap, &index_nodes);
      }
      // Each at most cap + 1: no overflow.
      *count += value_nodes + value_var_uses * std::min(index_nodes, cap + 1);
      return;
    }
    ++*count;
    for (const Expr& operand : expr->operands) Count(operand, count);
  }
};

}  // namespace

int64_t ExprTreeSize(const Expr& expr, int64_t cap) {
  int64_t count = 0;
  CountTree(expr, cap, &count);
  return count;
}

int64_t InlinedExprSize(const Expr& expr, const Buffer& buffer,
                        const Expr& value, int64_t cap) {
  int64_t var_uses = 0;
  CountVarUses(value, cap, &var_uses);
  const InlinedCount counter{&buffer,
                             std::min(ExprTreeSize(value, cap), cap + 1),
                             std::min(var_uses, cap + 1), cap};
  int64_t count = 0;
  counter.Count(expr, &count);
  return count;
}

}  // namespace lathe
