#include "compiler/workload/flop_count.h"

#include <cstdint>
#include <limits>

#include "compiler/ir/expr_functor.h"
#include "compiler/ir/program.h"
#include "compiler/ir/stmt.h"

namespace lathe {
namespace {

// Float operations of one evaluation of the expression (index arithmetic and
// comparisons are integer or boolean and not counted).
int64_t FloatOps(const Expr& expr) {
  int64_t ops = 0;
  VisitExpr(expr, [&ops](const Expr& e) {
    if (!e.dtype().is_float()) return;
    if (IsBinaryArith(e.kind()) || e.is(ExprKind::kCall)) ++ops;
  });
  return ops;
}

// a * b and a + b for a, b >= 0, INT64_MAX when they do not fit.
int64_t SaturatingMultiply(int64_t a, int64_t b) {
  int64_t product = 0;
  return __builtin_mul_overflow(a, b, &product)
             ? std::numeric_limits<int64_t>::max()
             : product;
}
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum)
             ? std::numeric_limits<int64_t>::max()
             : sum;
}

}  // namespace

absl::StatusOr<int64_t> FlopCount(const Workload& workload) {
  absl::StatusOr<Program> program = workload.InitialProgram();
  if (!program.ok()) return program.status();
  int64_t total = 0;
  for (const BlockNode* block : program->Blocks()) {
    int64_t instances = 1;
    for (const IterVar& iv : block->iter_vars) {
      instances = SaturatingMultiply(instances, iv.extent);
    }
    int64_t per_instance = 0;
    // The body only: a reduction's init is a constant store.
    VisitStmts(block->body.get(), [&per_instance](const StmtNode* stmt) {
      if (stmt->kind == StmtKind::kBlock) return false;  // counted on its own
      VisitOwnExprs(*stmt, [&per_instance](const Expr& e) {
        per_instance += FloatOps(e);
      });
      return true;
    });
    total = SaturatingAdd(total, SaturatingMultiply(instances, per_instance));
  }
  return total;
}

}  // namespace lathe
