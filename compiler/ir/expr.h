// Expressions of the loop IR.
//
// Semantics:
// - Expressions are immutable values shared by pointer. A Var is identified by
//   its node (pointer identity); its name is only a hint for printing.
// - Integer arithmetic is int64 and never overflows for the shapes Lathe
//   accepts (extents are bounded when a workload is built).
// - FloorDiv and FloorMod round toward negative infinity; Div is the true
//   division of floating-point values.
// - Comparisons, And, Or and Not yield bool. Select(c, a, b) evaluates to a
//   when c is true, else b, and evaluates only that side: the other may load
//   out of bounds (a padding stage selects X[h - 1] only where h >= 1), so
//   code generation must branch or mask, never load both. And and Or
//   likewise evaluate their second operand only when needed.
// - Load reads one element of a buffer at integer indices, one per dimension.
// - Call applies a pure math function element-wise: "exp", "sqrt", "log",
//   "tanh", "erf", "abs" of one argument, "pow" (x to the power y) of two.
//
// Every kind is listed once in LATHE_FOR_EACH_EXPR_KIND: the printer,
// structural equality, the interpreter and the mutators dispatch from it.
// Tests: tests/compiler/ir/expr_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/dtype.h"

namespace lathe {

struct Buffer;
using BufferPtr = std::shared_ptr<const Buffer>;

#define LATHE_FOR_EACH_EXPR_KIND(X) \
  X(IntImm)                         \
  X(FloatImm)                       \
  X(Var)                            \
  X(Add)                            \
  X(Sub)                            \
  X(Mul)                            \
  X(Div)                            \
  X(FloorDiv)                       \
  X(FloorMod)                       \
  X(Min)                            \
  X(Max)                            \
  X(Eq)                             \
  X(Ne)                             \
  X(Lt)                             \
  X(Le)                             \
  X(Gt)                             \
  X(Ge)                             \
  X(And)                            \
  X(Or)                             \
  X(Not)                            \
  X(Select)                         \
  X(Cast)                           \
  X(Call)                           \
  X(Load)

enum class ExprKind : uint8_t {
#define LATHE_EXPR_KIND_ENUM(name) k##name,
  LATHE_FOR_EACH_EXPR_KIND(LATHE_EXPR_KIND_ENUM)
#undef LATHE_EXPR_KIND_ENUM
};

const char* ExprKindName(ExprKind kind);
bool IsBinaryArith(ExprKind kind);  // Add .. Max
bool IsComparison(ExprKind kind);   // Eq .. Ge

class Expr;

// One node layout serves every kind: operands hold the children in a fixed
// order per kind (binary: lhs, rhs; Select: cond, then, else; Cast: value;
// Call: arguments; Load: indices).
struct ExprNode {
  ExprKind kind;
  DType dtype;
  int64_t int_value = 0;   // IntImm
  double float_value = 0;  // FloatImm
  std::string name;        // Var: name hint; Call: function name
  std::vector<Expr> operands;
  BufferPtr buffer;  // Load
};

class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> node)
      : node_(std::move(node)) {}
  // Implicit conversions make index arithmetic read naturally: `i * 4 + 1`.
  Expr(int64_t value);  // NOLINT(google-explicit-constructor)
  Expr(int value) : Expr(static_cast<int64_t>(value)) {}  // NOLINT
  Expr(double value);  // NOLINT: a float32 immediate

  bool defined() const { return node_ != nullptr; }
  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  const std::shared_ptr<const ExprNode>& node() const { return node_; }

  ExprKind kind() const { return node_->kind; }
  DType dtype() const { return node_->dtype; }
  bool is(ExprKind k) const { return node_ && node_->kind == k; }
  bool is_var() const { return is(ExprKind::kVar); }
  bool is_int_imm() const { return is(ExprKind::kIntImm); }
  // The value of an IntImm; only meaningful when is_int_imm().
  int64_t int_value() const { return node_->int_value; }
  const Expr& operand(size_t i) const { return node_->operands[i]; }
  size_t num_operands() const { return node_->operands.size(); }

  // Pointer identity: the same node (for Vars, the same variable).
  bool same_as(const Expr& other) const { return node_ == other.node_; }

  // A compact single-line rendering, for messages and tests.
  std::string ToString() const;

 private:
  std::shared_ptr<const ExprNode> node_;
};

// Orders Vars by identity, for std::map keys.
struct ExprIdentityLess {
  bool operator()(const Expr& a, const Expr& b) const {
    return a.get() < b.get();
  }
};

// Constructors. Integer operands are folded when both are constants.
Expr IntImm(int64_t value, DType dtype = DType::Index());
Expr FloatImm(double value, DType dtype = DType::Float32());
Expr Var(const std::string& name, DType dtype = DType::Index());
Expr MakeBinary(ExprKind kind, Expr a, Expr b);
Expr FloorDiv(Expr a, Expr b);
Expr FloorMod(Expr a, Expr b);
Expr Min(Expr a, Expr b);
Expr Max(Expr a, Expr b);
Expr And(Expr a, Expr b);
Expr Or(Expr a, Expr b);
Expr Not(Expr a);
Expr Select(Expr cond, Expr then_value, Expr else_value);
Expr Cast(DType dtype, Expr value);
Expr Call(const std::string& function, std::vector<Expr> args, DType dtype);
Expr Load(BufferPtr buffer, std::vector<Expr> indices);
// The zero of a type (0, 0.0f, false), and its extreme values.
Expr Zero(DType dtype);
Expr MinValue(DType dtype);
Expr MaxValue(DType dtype);
Expr True();

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
// Floating-point division for float operands, floor division for integers.
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);

}  // namespace lathe
