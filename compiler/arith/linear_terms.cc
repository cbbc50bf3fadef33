#include "compiler/arith/linear_terms.h"

namespace lathe {

void CollectLinearTerms(const Expr& e, int64_t scale, LinearTerms* out) {
  switch (e.kind()) {
    case ExprKind::kIntImm:
      out->constant += scale * e.int_value();
      return;
    case ExprKind::kAdd:
      CollectLinearTerms(e.operand(0), scale, out);
      CollectLinearTerms(e.operand(1), scale, out);
      return;
    case ExprKind::kSub:
      CollectLinearTerms(e.operand(0), scale, out);
      CollectLinearTerms(e.operand(1), -scale, out);
      return;
    case ExprKind::kMul:
      if (e.operand(1).is_int_imm()) {
        CollectLinearTerms(e.operand(0), scale * e.operand(1).int_value(), out);
        return;
      }
      if (e.operand(0).is_int_imm()) {
        CollectLinearTerms(e.operand(1), scale * e.operand(0).int_value(), out);
        return;
      }
      break;
    default:
      break;
  }
  out->terms.emplace_back(e, scale);
}

}  // namespace lathe
