#include "compiler/schedule/analysis/reused_stage.h"

#include <algorithm>
#include <vector>

#include "compiler/ir/expr_functor.h"

namespace lathe {
namespace {

bool HasLoad(const Expr& e) {
  bool found = false;
  VisitExpr(e, [&](const Expr& x) { found |= x.is(ExprKind::kLoad); });
  return found;
}

// The one store that is `stage`'s body, when `costly` accepts its value;
// nullptr otherwise.
const StoreNode* CostlyStore(
    const BlockNode& stage,
    const std::function<bool(const Expr& value)>& costly) {
  const StoreNode* store = stage.body ? stage.body->as<StoreNode>() : nullptr;
  return store != nullptr && costly(store->value) ? store : nullptr;
}

}  // namespace

bool HasGuardedLoad(const Expr& value) {
  bool found = false;
  VisitExpr(value, [&](const Expr& x) {
    if (x.is(ExprKind::kSelect) &&
        (HasLoad(x.operand(1)) || HasLoad(x.operand(2)))) {
      found = true;
    }
  });
  return found;
}

bool HasMathCall(const Expr& value) {
  bool found = false;
  VisitExpr(value, [&](const Expr& x) { found |= x.is(ExprKind::kCall); });
  return found;
}

bool IsReusedStage(const Program& program, const BlockNode& stage,
                   const std::function<bool(const Expr& value)>& costly,
                   UnitIterVars unit_vars) {
  const StoreNode* store = CostlyStore(stage, costly);
  if (store == nullptr) return false;
  for (const BlockNode* reader : program.Blocks()) {
    if (reader == &stage) continue;
    std::vector<Expr> indices;
    for (const BufferAccess& read : AccessesOf(*reader).reads) {
      if (read.buffer == store->buffer) {
        indices.insert(indices.end(), read.indices.begin(), read.indices.end());
      }
    }
    if (indices.empty()) continue;
    for (const IterVar& iv : reader->iter_vars) {
      if (unit_vars == UnitIterVars::kIgnore && iv.extent < 2) continue;
      if (std::none_of(indices.begin(), indices.end(), [&](const Expr& index) {
            return UsesVar(index, iv.var);
          })) {
        return true;
      }
    }
  }
  return false;
}

bool IsWindowReusedStage(const Program& program, const BlockNode& stage,
                         const std::function<bool(const Expr& value)>& costly) {
  const StoreNode* store = CostlyStore(stage, costly);
  if (store == nullptr) return false;
  for (const BlockNode* reader : program.Blocks()) {
    if (reader == &stage) continue;
    for (const BufferAccess& read : AccessesOf(*reader).reads) {
      if (read.buffer != store->buffer) continue;
      for (const Expr& index : read.indices) {
        const auto window_vars =
            std::count_if(reader->iter_vars.begin(), reader->iter_vars.end(),
                          [&](const IterVar& iv) {
                            return iv.extent >= 2 && UsesVar(index, iv.var);
                          });
        if (window_vars >= 2) return true;
      }
    }
  }
  return false;
}

bool IsSharedStage(const Program& program, const BlockNode& stage,
                   const std::function<bool(const Expr& value)>& costly) {
  const StoreNode* store = CostlyStore(stage, costly);
  if (store == nullptr) return false;
  int readers = 0;
  for (const BlockNode* reader : program.Blocks()) {
    if (reader == &stage) continue;
    const std::vector<BufferAccess> reads = AccessesOf(*reader).reads;
    readers += std::any_of(
        reads.begin(), reads.end(),
        [&](const BufferAccess& read) { return read.buffer == store->buffer; });
  }
  return readers >= 2;
}

}  // namespace lathe
