// The shape shared by the per-store feature groups: each group names its
// features and says how the program vector aggregates them over stores.
//
// A group computes raw (unscaled, non-negative) numbers for one store;
// program_features.cc turns every per-store feature into two entries of the
// program vector according to its Aggregation (see there). Scaling happens
// only after aggregation, so that sums are sums of counts, not of logarithms.
// Tests: tests/tuner/features/program_features_test.cc.
#pragma once

#include <cmath>
#include <string>
#include <vector>

namespace lathe::tuner {

enum class Aggregation {
  // Additive over stores (operations, bytes, executions): log2(1 + sum) and
  // log2(1 + max).
  kExtensive,
  // A property of a store (a length, a stride, a depth): log2(1 + mean) and
  // log2(1 + max), the mean weighted by each store's executions.
  kIntensive,
  // A flag or a share in [0, 1]: the mean weighted by executions, and the
  // max, unscaled.
  kFraction,
};

struct StoreFeatureSpec {
  std::string name;  // "<group>.<feature>", e.g. "arith.float_mad"
  Aggregation aggregation;
};

// The scaling of counts: log2(1 + x); 0 for x <= 0 or NaN and 1024 (the
// log2 of the largest double) for +inf, so that a feature is never NaN or
// infinite, whatever the program.
inline double Log2p1(double x) {
  if (!(x > 0)) return 0;
  if (std::isinf(x)) return 1024;
  return std::log2(1 + x);
}

}  // namespace lathe::tuner
