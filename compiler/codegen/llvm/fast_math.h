// Branch-free float32 exp, erf and tanh as plain LLVM IR (arithmetic,
// selects, llvm.rint/fabs/fma/copysign, bit casts), for scalars and vectors
// alike: what the CPU back end emits for these calls on float32 values, so
// that loops over them vectorize (a call of libm's expf, erff or tanhf
// stays one scalar call per element) and no libm symbol is needed.
//
// Accuracy over all finite inputs, against the correctly rounded value:
// - exp: Cody-Waite reduction by ln 2 and a degree-7 Taylor polynomial on
//   |r| <= ln2 / 2, scaled by two powers of two: relative error within
//   2e-7; results below 2^-126 come out denormal or zero by the scaling's
//   rounding; above FLT_MAX, +inf.
// - erf: the odd Taylor series to x^9 for |x| < 0.25, else Abramowitz &
//   Stegun 7.1.26 (1 - poly(t) exp(-x^2), t = 1 / (1 + p|x|)) with the
//   sign restored: absolute error within 2e-7, so relative within 2e-6.
// - tanh: the odd Taylor series to x^7 for |x| < 0.125, else
//   1 - 2 / (exp(2|x|) + 1) with the sign restored: relative error within
//   1e-6.
// NaN in gives NaN out; +-inf give the limits (exp: +inf and 0; erf and
// tanh: +-1).
// Tests: tests/compiler/codegen/fast_math_test.cc.
#pragma once

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Value.h"

namespace lathe::codegen_internal {

// `x` is a float or a vector of floats; the result has its type.
llvm::Value* EmitFastExpF32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitFastErfF32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitFastTanhF32(llvm::IRBuilder<>& b, llvm::Value* x);

}  // namespace lathe::codegen_internal
