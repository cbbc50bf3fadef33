// Which vectorized loops the CPU back end emits as explicit vector IR, and
// which lazy operands it may evaluate eagerly: the legality checks of
// codegen, on the loop IR alone (no LLVM; see vector_legality.h).
#include "compiler/codegen/vector_legality.h"

#include "compiler/ir/expr_equal.h"
#include "compiler/ir/expr_functor.h"

namespace lathe {
namespace {

bool IsF32(DType t) { return t.is_float() && t.bits() == 32; }

// e == var + (something invariant in var), with unit coefficient.
bool IsUnitStride(const Expr& e, const Expr& var) {
  if (e.get() == var.get()) return true;
  if (e.is(ExprKind::kAdd)) {
    bool u0 = UsesVar(e.operand(0), var), u1 = UsesVar(e.operand(1), var);
    if (u0 && !u1) return IsUnitStride(e.operand(0), var);
    if (u1 && !u0) return IsUnitStride(e.operand(1), var);
    return false;
  }
  if (e.is(ExprKind::kSub))
    return !UsesVar(e.operand(1), var) && IsUnitStride(e.operand(0), var);
  return false;
}

bool IsVectorAccess(const BufferPtr& buf, const std::vector<Expr>& indices,
                    const Expr& var) {
  if (!IsF32(buf->dtype) || indices.empty() ||
      indices.size() != buf->shape.size())
    return false;
  for (size_t d = 0; d + 1 < indices.size(); ++d) {
    if (UsesVar(indices[d], var)) return false;
  }
  return IsUnitStride(indices.back(), var);
}

struct VectorCheck {
  const Expr* var;
  std::vector<const StoreNode*> stores;
  const VarRanges* ranges;
  bool StoredHere(const Buffer* b) const {
    for (const StoreNode* s : stores) {
      if (s->buffer.get() == b) return true;
    }
    return false;
  }
};

bool CanVectorizeExpr(const Expr& e, const VectorCheck& vc) {
  const Expr& var = *vc.var;
  if (!UsesVar(e, var)) {
    // Evaluated once per chunk: it must not read what the body writes.
    bool reads_stored = false;
    VisitExpr(e, [&](const Expr& x) {
      if (x.is(ExprKind::kLoad) && vc.StoredHere(x->buffer.get()))
        reads_stored = true;
    });
    return !reads_stored;
  }
  if (!IsF32(e.dtype())) return false;
  switch (e.kind()) {
    case ExprKind::kLoad: {
      if (!IsVectorAccess(e->buffer, e->operands, var)) return false;
      for (const StoreNode* s : vc.stores) {
        if (s->buffer != e->buffer) continue;
        for (size_t d = 0; d < s->indices.size(); ++d) {
          if (!ExprEqual(s->indices[d], e.operand(d))) return false;
        }
      }
      return true;
    }
    case ExprKind::kAdd:
    case ExprKind::kSub:
    case ExprKind::kMul:
    case ExprKind::kDiv:
    case ExprKind::kMin:
    case ExprKind::kMax:
      return CanVectorizeExpr(e.operand(0), vc) &&
             CanVectorizeExpr(e.operand(1), vc);
    case ExprKind::kCall:
      // The float32 functions the CPU back end emits as plain IR
      // (llvm/fast_math.h) or as one vector instruction.
      return e.num_operands() == 1 &&
             (e->name == "exp" || e->name == "erf" || e->name == "tanh" ||
              e->name == "abs" || e->name == "sqrt") &&
             CanVectorizeExpr(e.operand(0), vc);
    case ExprKind::kSelect:
      return !UsesVar(e.operand(0), var) &&
             IsSafeToSpeculate(e.operand(1), *vc.ranges) &&
             IsSafeToSpeculate(e.operand(2), *vc.ranges) &&
             CanVectorizeExpr(e.operand(1), vc) &&
             CanVectorizeExpr(e.operand(2), vc);
    default:
      return false;
  }
}

}  // namespace

void CollectStraightLineStores(const StmtNode* s,
                               std::vector<const StoreNode*>* stores,
                               bool* ok) {
  if (s == nullptr) return;
  if (const auto* st = s->as<StoreNode>()) {
    stores->push_back(st);
  } else if (const auto* seq = s->as<SeqNode>()) {
    for (const StmtPtr& c : seq->stmts)
      CollectStraightLineStores(c.get(), stores, ok);
  } else {
    *ok = false;
  }
}

bool IsSafeToSpeculate(const Expr& e, const VarRanges& ranges) {
  if (!e.defined()) return true;
  switch (e.kind()) {
    case ExprKind::kLoad: {
      const Buffer& buf = *e->buffer;
      for (size_t d = 0; d < e.num_operands() && d < buf.shape.size(); ++d) {
        Interval iv = BoundOf(e.operand(d), ranges);
        if (!iv.is_bounded() || iv.min < 0 || iv.max >= buf.shape[d])
          return false;
      }
      break;
    }
    case ExprKind::kDiv:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod:
      if (!e.dtype().is_float() &&
          !(e.operand(1).is_int_imm() && e.operand(1).int_value() > 0)) {
        return false;
      }
      break;
    default:
      break;
  }
  for (const Expr& op : e->operands) {
    if (!IsSafeToSpeculate(op, ranges)) return false;
  }
  return true;
}

int64_t ExplicitVectorWidth(const ForNode& loop, int64_t max_lanes,
                            const VarRanges& ranges) {
  int64_t lanes = max_lanes;
  while (lanes > 1 && loop.extent % lanes != 0) lanes /= 2;
  if (lanes < 4) return 0;
  VectorCheck vc{&loop.var, {}, &ranges};
  bool ok = true;
  CollectStraightLineStores(loop.body.get(), &vc.stores, &ok);
  if (!ok || vc.stores.empty()) return 0;
  for (const StoreNode* s : vc.stores) {
    if (!IsVectorAccess(s->buffer, s->indices, loop.var) ||
        !CanVectorizeExpr(s->value, vc))
      return 0;
  }
  return lanes;
}

}  // namespace lathe
