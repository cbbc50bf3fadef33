// Generic traversals of expression trees.
//
// Every expression kind stores its children in `operands`, so one walker and
// one rebuilder serve all kinds. Tests: tests/compiler/ir/expr_test.cc.
#pragma once

#include <functional>
#include <map>

#include "compiler/ir/expr.h"

namespace lathe {

// Post-order visit of every node (children before parents).
void VisitExpr(const Expr& expr, const std::function<void(const Expr&)>& fn);

// Rebuilds the expression bottom-up: fn receives a node whose operands have
// already been rewritten and returns its replacement (or the node itself).
// Unchanged subtrees keep their identity.
Expr MutateExpr(const Expr& expr, const std::function<Expr(const Expr&)>& fn);

// Rebuilds a node of the same kind with new operands (constant folding of
// integer arithmetic applies).
Expr WithOperands(const Expr& expr, std::vector<Expr> operands);

using VarMap = std::map<Expr, Expr, ExprIdentityLess>;
// Replaces each Var that is a key of `map` with its value.
Expr Substitute(const Expr& expr, const VarMap& map);

// Whether expr mentions var / any var satisfying pred.
bool UsesVar(const Expr& expr, const Expr& var);
bool UsesAnyVar(const Expr& expr, const std::function<bool(const Expr&)>& pred);
// Whether expr reads buffer.
bool ReadsBuffer(const Expr& expr, const Buffer* buffer);

}  // namespace lathe
