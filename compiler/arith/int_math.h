// Integer division and remainder rounding toward negative infinity: the
// semantics of FloorDiv and FloorMod in the IR (compiler/ir/expr.h), shared
// by constant folding, the simplifier, bound and region analyses and the
// interpreter so that they can never disagree.
// Tests: tests/compiler/arith/int_math_test.cc.
#pragma once

#include <cstdint>

namespace lathe {

// b != 0.
inline int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

inline int64_t FloorModInt(int64_t a, int64_t b) {
  return a - FloorDivInt(a, b) * b;
}

}  // namespace lathe
