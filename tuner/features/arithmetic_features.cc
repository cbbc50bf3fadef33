#include "tuner/features/arithmetic_features.h"

namespace lathe::tuner {
namespace {

bool IsFloatMul(const Expr& e) {
  return e.is(ExprKind::kMul) && e.dtype().is_float();
}

void Count(const Expr& e, ArithmeticCounts* c) {
  if (!e.defined()) return;
  const ExprKind kind = e.kind();
  const bool is_float = e.dtype().is_float();
  // A float add or subtract of a product is one multiply-add: count it and
  // descend into the product's operands rather than the product.
  if (is_float && (kind == ExprKind::kAdd || kind == ExprKind::kSub)) {
    for (int side = 0; side < 2; ++side) {
      if (!IsFloatMul(e.operand(side))) continue;
      c->float_mad += 1;
      Count(e.operand(side).operand(0), c);
      Count(e.operand(side).operand(1), c);
      Count(e.operand(1 - side), c);
      return;
    }
  }
  for (size_t i = 0; i < e.num_operands(); ++i) Count(e.operand(i), c);
  switch (kind) {
    case ExprKind::kAdd:
    case ExprKind::kSub:
      (is_float ? c->float_add_sub : c->int_add_sub) += 1;
      break;
    case ExprKind::kMul:
      (is_float ? c->float_mul : c->int_mul) += 1;
      break;
    case ExprKind::kDiv:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod:
      (is_float ? c->float_div : c->int_div_mod) += 1;
      break;
    case ExprKind::kMin:
    case ExprKind::kMax:
      (is_float ? c->float_min_max : c->int_min_max) += 1;
      break;
    case ExprKind::kAnd:
    case ExprKind::kOr:
    case ExprKind::kNot:
      c->bool_op += 1;
      break;
    case ExprKind::kSelect:
      c->select += 1;
      break;
    case ExprKind::kCast:
      c->cast += 1;
      break;
    case ExprKind::kCall:
      // Math functions are float functions; an integer call (abs of an
      // index) is index arithmetic.
      (is_float ? c->float_math : c->int_add_sub) += 1;
      break;
    default:
      if (IsComparison(kind)) {
        (e.operand(0).dtype().is_float() ? c->float_cmp : c->int_cmp) += 1;
      }
      break;
  }
}

}  // namespace

ArithmeticCounts CountArithmetic(const StoreNode& store) {
  ArithmeticCounts c;
  for (const Expr& index : store.indices) Count(index, &c);
  Count(store.value, &c);
  return c;
}

const std::vector<StoreFeatureSpec>& ArithmeticFeatureSpecs() {
  static const auto* specs = new std::vector<StoreFeatureSpec>{
      {"arith.float_mad", Aggregation::kExtensive},
      {"arith.float_add_sub", Aggregation::kExtensive},
      {"arith.float_mul", Aggregation::kExtensive},
      {"arith.float_div", Aggregation::kExtensive},
      {"arith.float_min_max", Aggregation::kExtensive},
      {"arith.float_cmp", Aggregation::kExtensive},
      {"arith.float_math", Aggregation::kExtensive},
      {"arith.int_add_sub", Aggregation::kExtensive},
      {"arith.int_mul", Aggregation::kExtensive},
      {"arith.int_div_mod", Aggregation::kExtensive},
      {"arith.int_min_max", Aggregation::kExtensive},
      {"arith.int_cmp", Aggregation::kExtensive},
      {"arith.bool_op", Aggregation::kExtensive},
      {"arith.select", Aggregation::kExtensive},
      {"arith.cast", Aggregation::kExtensive},
      {"arith.float_ops", Aggregation::kExtensive},
  };
  return *specs;
}

void ExtractArithmeticFeatures(const StoreContext& store, double* out) {
  const ArithmeticCounts c = CountArithmetic(*store.store);
  const double n = store.executions;
  const double per_execution[] = {
      c.float_mad,     c.float_add_sub, c.float_mul,   c.float_div,
      c.float_min_max, c.float_cmp,     c.float_math,  c.int_add_sub,
      c.int_mul,       c.int_div_mod,   c.int_min_max, c.int_cmp,
      c.bool_op,       c.select,        c.cast,        c.FloatOps(),
  };
  static_assert(sizeof(per_execution) / sizeof(double) == 16, "one per spec");
  for (size_t i = 0; i < 16; ++i) out[i] = per_execution[i] * n;
}

}  // namespace lathe::tuner
