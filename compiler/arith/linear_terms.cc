#include "compiler/arith/linear_terms.h"

#include "compiler/ir/expr_equal.h"

namespace lathe {
namespace {

// a * b and a + b, wrapped around on overflow, which sets *overflowed.
int64_t Mul(int64_t a, int64_t b, bool* overflowed) {
  int64_t result;
  if (__builtin_mul_overflow(a, b, &result)) *overflowed = true;
  return result;
}

int64_t Add(int64_t a, int64_t b, bool* overflowed) {
  int64_t result;
  if (__builtin_add_overflow(a, b, &result)) *overflowed = true;
  return result;
}

}  // namespace

void LinearTerms::AddTerm(const Expr& atom, int64_t coef, EqualAtoms atoms) {
  if (atoms == EqualAtoms::kMerge) {
    for (auto& [a, c] : terms) {
      if (ExprEqual(a, atom)) {
        c = Add(c, coef, &overflowed);
        return;
      }
    }
  }
  terms.emplace_back(atom, coef);
}

void CollectLinearTerms(const Expr& e, int64_t scale, LinearTerms* out,
                        EqualAtoms atoms) {
  switch (e.kind()) {
    case ExprKind::kIntImm:
      out->constant =
          Add(out->constant, Mul(scale, e.int_value(), &out->overflowed),
              &out->overflowed);
      return;
    case ExprKind::kAdd:
      CollectLinearTerms(e.operand(0), scale, out, atoms);
      CollectLinearTerms(e.operand(1), scale, out, atoms);
      return;
    case ExprKind::kSub:
      CollectLinearTerms(e.operand(0), scale, out, atoms);
      CollectLinearTerms(e.operand(1), Mul(scale, -1, &out->overflowed), out,
                         atoms);
      return;
    case ExprKind::kMul:
      if (e.operand(1).is_int_imm()) {
        CollectLinearTerms(
            e.operand(0),
            Mul(scale, e.operand(1).int_value(), &out->overflowed), out, atoms);
        return;
      }
      if (e.operand(0).is_int_imm()) {
        CollectLinearTerms(
            e.operand(1),
            Mul(scale, e.operand(0).int_value(), &out->overflowed), out, atoms);
        return;
      }
      break;
    default:
      break;
  }
  out->AddTerm(e, scale, atoms);
}

}  // namespace lathe
