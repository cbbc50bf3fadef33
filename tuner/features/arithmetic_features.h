// Arithmetic features of a store: the operations its executions perform, by
// kind, as TVM MetaSchedule's per-store features count them.
//
// Counted over the store's value and its indices (loads' indices included):
// float ops by the value's type, integer ops (mostly index arithmetic) by
// theirs. A float add or subtract with a product operand (`a * b + c`,
// `c - a * b`) counts once as a mad, not as an add and a multiply. Every count
// is per execution times the store's executions (StoreContext::executions).
// float_ops totals the float work as FlopCount does (a mad is 2; add, sub,
// mul, div, min, max and math calls 1; comparisons and selects 0), so that
// its sum over a program's stores is the workload's FLOP count.
// Tests: tests/tuner/features/arithmetic_features_test.cc.
#pragma once

#include <vector>

#include "compiler/ir/stmt.h"
#include "tuner/features/feature_group.h"
#include "tuner/features/store_context.h"

namespace lathe::tuner {

// Operation counts of one execution of a store.
struct ArithmeticCounts {
  double float_mad = 0;
  double float_add_sub = 0;
  double float_mul = 0;
  double float_div = 0;
  double float_min_max = 0;
  double float_cmp = 0;
  double float_math = 0;  // exp, sqrt, log, tanh, abs, ...
  double int_add_sub = 0;
  double int_mul = 0;
  double int_div_mod = 0;
  double int_min_max = 0;
  double int_cmp = 0;
  double bool_op = 0;  // and, or, not
  double select = 0;
  double cast = 0;

  double FloatOps() const {
    return 2 * float_mad + float_add_sub + float_mul + float_div +
           float_min_max + float_math;
  }
};

ArithmeticCounts CountArithmetic(const StoreNode& store);

const std::vector<StoreFeatureSpec>& ArithmeticFeatureSpecs();

// Writes ArithmeticFeatureSpecs().size() raw values.
void ExtractArithmeticFeatures(const StoreContext& store, double* out);

}  // namespace lathe::tuner
