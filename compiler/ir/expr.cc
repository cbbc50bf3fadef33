#include "compiler/ir/expr.h"

#include <limits>

#include "base/check.h"
#include "compiler/arith/int_math.h"
#include "compiler/ir/buffer.h"
#include "compiler/ir/printer.h"

namespace lathe {
namespace {

std::shared_ptr<ExprNode> NewNode(ExprKind kind, DType dtype) {
  auto node = std::make_shared<ExprNode>();
  node->kind = kind;
  node->dtype = dtype;
  return node;
}

// Folds integer constants and the identities that keep printed indices
// readable (x + 0, x * 1, x * 0). Anything deeper is arith::Simplify's job.
Expr FoldIntBinary(ExprKind kind, const Expr& a, const Expr& b) {
  if (!a.dtype().is_int() || !b.dtype().is_int()) return Expr();
  if (a.is_int_imm() && b.is_int_imm()) {
    int64_t x = a.int_value(), y = b.int_value();
    switch (kind) {
      case ExprKind::kAdd:
        return IntImm(x + y, a.dtype());
      case ExprKind::kSub:
        return IntImm(x - y, a.dtype());
      case ExprKind::kMul:
        return IntImm(x * y, a.dtype());
      case ExprKind::kFloorDiv:
        if (y != 0) return IntImm(FloorDivInt(x, y), a.dtype());
        break;
      case ExprKind::kFloorMod:
        if (y != 0) return IntImm(FloorModInt(x, y), a.dtype());
        break;
      case ExprKind::kMin:
        return IntImm(std::min(x, y), a.dtype());
      case ExprKind::kMax:
        return IntImm(std::max(x, y), a.dtype());
      default:
        break;
    }
    return Expr();
  }
  auto is_const = [](const Expr& e, int64_t v) {
    return e.is_int_imm() && e.int_value() == v;
  };
  switch (kind) {
    case ExprKind::kAdd:
      if (is_const(a, 0)) return b;
      if (is_const(b, 0)) return a;
      break;
    case ExprKind::kSub:
      if (is_const(b, 0)) return a;
      break;
    case ExprKind::kMul:
      if (is_const(a, 1)) return b;
      if (is_const(b, 1)) return a;
      if (is_const(a, 0) || is_const(b, 0)) return IntImm(0, a.dtype());
      break;
    case ExprKind::kFloorDiv:
      if (is_const(b, 1)) return a;
      break;
    case ExprKind::kFloorMod:
      if (is_const(b, 1)) return IntImm(0, a.dtype());
      break;
    default:
      break;
  }
  return Expr();
}

}  // namespace

const char* ExprKindName(ExprKind kind) {
  switch (kind) {
#define LATHE_EXPR_KIND_NAME(name) \
  case ExprKind::k##name:          \
    return #name;
    LATHE_FOR_EACH_EXPR_KIND(LATHE_EXPR_KIND_NAME)
#undef LATHE_EXPR_KIND_NAME
  }
  return "?";
}

bool IsBinaryArith(ExprKind kind) {
  return kind >= ExprKind::kAdd && kind <= ExprKind::kMax;
}

bool IsComparison(ExprKind kind) {
  return kind >= ExprKind::kEq && kind <= ExprKind::kGe;
}

Expr::Expr(int64_t value) : Expr(IntImm(value)) {}
Expr::Expr(double value) : Expr(FloatImm(value)) {}

std::string Expr::ToString() const { return PrintExpr(*this); }

Expr IntImm(int64_t value, DType dtype) {
  auto node = NewNode(ExprKind::kIntImm, dtype);
  node->int_value = value;
  return Expr(std::move(node));
}

Expr FloatImm(double value, DType dtype) {
  auto node = NewNode(ExprKind::kFloatImm, dtype);
  node->float_value = value;
  return Expr(std::move(node));
}

Expr Var(const std::string& name, DType dtype) {
  auto node = NewNode(ExprKind::kVar, dtype);
  node->name = name;
  return Expr(std::move(node));
}

Expr MakeBinary(ExprKind kind, Expr a, Expr b) {
  LATHE_CHECK(a.defined() && b.defined(), "binary ", ExprKindName(kind),
              " with an undefined operand");
  if (IsBinaryArith(kind)) {
    LATHE_CHECK(a.dtype() == b.dtype(), "operands of ", ExprKindName(kind),
                " differ in type: ", a.dtype().ToString(), " vs ",
                b.dtype().ToString());
    if (Expr folded = FoldIntBinary(kind, a, b); folded.defined()) {
      return folded;
    }
  }
  DType result = a.dtype();
  if (IsComparison(kind) || kind == ExprKind::kAnd || kind == ExprKind::kOr) {
    result = DType::Bool();
  }
  if (IsComparison(kind) && a.is_int_imm() && b.is_int_imm()) {
    int64_t x = a.int_value(), y = b.int_value();
    bool v = false;
    switch (kind) {
      case ExprKind::kEq:
        v = x == y;
        break;
      case ExprKind::kNe:
        v = x != y;
        break;
      case ExprKind::kLt:
        v = x < y;
        break;
      case ExprKind::kLe:
        v = x <= y;
        break;
      case ExprKind::kGt:
        v = x > y;
        break;
      default:
        v = x >= y;
        break;
    }
    return IntImm(v ? 1 : 0, DType::Bool());
  }
  auto node = NewNode(kind, result);
  node->operands = {std::move(a), std::move(b)};
  return Expr(std::move(node));
}

Expr FloorDiv(Expr a, Expr b) {
  return MakeBinary(ExprKind::kFloorDiv, std::move(a), std::move(b));
}
Expr FloorMod(Expr a, Expr b) {
  return MakeBinary(ExprKind::kFloorMod, std::move(a), std::move(b));
}
Expr Min(Expr a, Expr b) {
  return MakeBinary(ExprKind::kMin, std::move(a), std::move(b));
}
Expr Max(Expr a, Expr b) {
  return MakeBinary(ExprKind::kMax, std::move(a), std::move(b));
}

Expr True() { return IntImm(1, DType::Bool()); }

static bool IsBoolConst(const Expr& e, bool value) {
  return e.is_int_imm() && e.dtype().is_bool() && (e.int_value() != 0) == value;
}

Expr And(Expr a, Expr b) {
  if (IsBoolConst(a, true)) return b;
  if (IsBoolConst(b, true)) return a;
  if (IsBoolConst(a, false) || IsBoolConst(b, false)) {
    return IntImm(0, DType::Bool());
  }
  return MakeBinary(ExprKind::kAnd, std::move(a), std::move(b));
}

Expr Or(Expr a, Expr b) {
  if (IsBoolConst(a, false)) return b;
  if (IsBoolConst(b, false)) return a;
  if (IsBoolConst(a, true) || IsBoolConst(b, true)) return True();
  return MakeBinary(ExprKind::kOr, std::move(a), std::move(b));
}

Expr Not(Expr a) {
  if (a.is_int_imm()) return IntImm(a.int_value() == 0 ? 1 : 0, DType::Bool());
  auto node = NewNode(ExprKind::kNot, DType::Bool());
  node->operands = {std::move(a)};
  return Expr(std::move(node));
}

Expr Select(Expr cond, Expr then_value, Expr else_value) {
  LATHE_CHECK(then_value.dtype() == else_value.dtype(),
              "select arms differ in type");
  if (IsBoolConst(cond, true)) return then_value;
  if (IsBoolConst(cond, false)) return else_value;
  auto node = NewNode(ExprKind::kSelect, then_value.dtype());
  node->operands = {std::move(cond), std::move(then_value),
                    std::move(else_value)};
  return Expr(std::move(node));
}

Expr Cast(DType dtype, Expr value) {
  if (value.dtype() == dtype) return value;
  if (value.is_int_imm() && dtype.is_int())
    return IntImm(value.int_value(), dtype);
  if (value.is_int_imm() && dtype.is_float()) {
    return FloatImm(static_cast<double>(value.int_value()), dtype);
  }
  auto node = NewNode(ExprKind::kCast, dtype);
  node->operands = {std::move(value)};
  return Expr(std::move(node));
}

Expr Call(const std::string& function, std::vector<Expr> args, DType dtype) {
  auto node = NewNode(ExprKind::kCall, dtype);
  node->name = function;
  node->operands = std::move(args);
  return Expr(std::move(node));
}

Expr Load(BufferPtr buffer, std::vector<Expr> indices) {
  LATHE_CHECK(buffer != nullptr, "load from a null buffer");
  LATHE_CHECK(indices.size() == buffer->shape.size(), "load from ",
              buffer->name, " with ", indices.size(), " indices for ",
              buffer->shape.size(), " dimensions");
  auto node = NewNode(ExprKind::kLoad, buffer->dtype);
  node->buffer = std::move(buffer);
  node->operands = std::move(indices);
  return Expr(std::move(node));
}

Expr Zero(DType dtype) {
  return dtype.is_float() ? FloatImm(0.0, dtype) : IntImm(0, dtype);
}

Expr MinValue(DType dtype) {
  if (dtype.is_float()) {
    return FloatImm(-std::numeric_limits<double>::infinity(), dtype);
  }
  if (dtype.is_bool()) return IntImm(0, dtype);
  if (dtype.code() == DType::Code::kUInt) return IntImm(0, dtype);
  return IntImm(dtype.bits() >= 64 ? std::numeric_limits<int64_t>::min()
                                   : -(int64_t{1} << (dtype.bits() - 1)),
                dtype);
}

Expr MaxValue(DType dtype) {
  if (dtype.is_float()) {
    return FloatImm(std::numeric_limits<double>::infinity(), dtype);
  }
  if (dtype.is_bool()) return IntImm(1, dtype);
  int bits =
      dtype.code() == DType::Code::kUInt ? dtype.bits() : dtype.bits() - 1;
  return IntImm(bits >= 63 ? std::numeric_limits<int64_t>::max()
                           : (int64_t{1} << bits) - 1,
                dtype);
}

Expr operator+(Expr a, Expr b) { return MakeBinary(ExprKind::kAdd, a, b); }
Expr operator-(Expr a, Expr b) { return MakeBinary(ExprKind::kSub, a, b); }
Expr operator*(Expr a, Expr b) { return MakeBinary(ExprKind::kMul, a, b); }
Expr operator/(Expr a, Expr b) {
  if (a.dtype().is_int()) return FloorDiv(a, b);
  return MakeBinary(ExprKind::kDiv, a, b);
}
Expr operator%(Expr a, Expr b) { return FloorMod(a, b); }
Expr operator==(Expr a, Expr b) { return MakeBinary(ExprKind::kEq, a, b); }
Expr operator!=(Expr a, Expr b) { return MakeBinary(ExprKind::kNe, a, b); }
Expr operator<(Expr a, Expr b) { return MakeBinary(ExprKind::kLt, a, b); }
Expr operator<=(Expr a, Expr b) { return MakeBinary(ExprKind::kLe, a, b); }
Expr operator>(Expr a, Expr b) { return MakeBinary(ExprKind::kGt, a, b); }
Expr operator>=(Expr a, Expr b) { return MakeBinary(ExprKind::kGe, a, b); }
Expr operator&&(Expr a, Expr b) { return And(a, b); }
Expr operator||(Expr a, Expr b) { return Or(a, b); }
Expr operator!(Expr a) { return Not(a); }

}  // namespace lathe
