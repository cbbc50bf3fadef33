#include "compiler/codegen/llvm/fast_math.h"

#include <initializer_list>

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Intrinsics.h"

namespace lathe::codegen_internal {
namespace {

// A float constant of x's type (splat for vectors).
llvm::Value* Const(llvm::Value* x, double v) {
  return llvm::ConstantFP::get(x->getType(), v);
}

// The integer type of x's shape: i32 or <N x i32>.
llvm::Type* IntTypeOf(llvm::Value* x) {
  llvm::Type* i32 = llvm::Type::getInt32Ty(x->getContext());
  if (auto* vt = llvm::dyn_cast<llvm::VectorType>(x->getType()))
    return llvm::VectorType::get(i32, vt->getElementCount());
  return i32;
}

// c[0] + x (c[1] + x (c[2] + ...)), by fused multiply-adds.
llvm::Value* Horner(llvm::IRBuilder<>& b, llvm::Value* x,
                    std::initializer_list<double> coefficients) {
  const double* c = coefficients.end();
  llvm::Value* acc = Const(x, *--c);
  while (c != coefficients.begin()) {
    acc = b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()},
                            {acc, x, Const(x, *--c)});
  }
  return acc;
}

// 2^n for an integral float n in [-75, 64] (a normal float), by building
// its exponent bits.
llvm::Value* PowerOfTwo(llvm::IRBuilder<>& b, llvm::Value* n) {
  llvm::Type* int_type = IntTypeOf(n);
  llvm::Value* bits =
      b.CreateShl(b.CreateAdd(b.CreateFPToSI(n, int_type),
                              llvm::ConstantInt::get(int_type, 127)),
                  llvm::ConstantInt::get(int_type, 23));
  return b.CreateBitCast(bits, n->getType());
}

// While alive, the builder's float operations carry only `contract`: the
// kernel's reassoc would let LLVM regroup the scaling by two powers of two
// (2^h * 2^(n-h) overflows where p * 2^h * 2^(n-h) does not) or the
// range reduction.
class ExactArithmetic {
 public:
  explicit ExactArithmetic(llvm::IRBuilder<>& b) : guard_(b) {
    llvm::FastMathFlags flags;
    flags.setAllowContract();
    b.setFastMathFlags(flags);
  }

 private:
  llvm::IRBuilderBase::FastMathFlagGuard guard_;
};

}  // namespace

llvm::Value* EmitFastExpF32(llvm::IRBuilder<>& b, llvm::Value* x) {
  ExactArithmetic exact(b);
  // Below -104 the result rounds to zero, above 88.73 it overflows: the
  // clamp keeps n (below) within what two normal powers of two can scale.
  llvm::Value* clamped =
      b.CreateMinNum(b.CreateMaxNum(x, Const(x, -104.0)), Const(x, 88.75));
  llvm::Value* n = b.CreateUnaryIntrinsic(
      llvm::Intrinsic::rint,
      b.CreateFMul(clamped, Const(x, 1.4426950408889634)));
  // r = x - n ln2, with ln2 split in a part whose product with n is exact
  // and the rest.
  llvm::Value* r = b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()},
                                     {n, Const(x, -0.693359375), clamped});
  r = b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()},
                        {n, Const(x, 2.12194440054690583e-4), r});
  llvm::Value* p = Horner(
      b, r,
      {1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040});
  // n in [-150, 128]: 2^n as 2^h * 2^(n-h), h = trunc(n / 2), both normal.
  llvm::Value* half = b.CreateUnaryIntrinsic(llvm::Intrinsic::trunc,
                                             b.CreateFMul(n, Const(x, 0.5)));
  llvm::Value* result = b.CreateFMul(b.CreateFMul(p, PowerOfTwo(b, half)),
                                     PowerOfTwo(b, b.CreateFSub(n, half)));
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

llvm::Value* EmitFastErfF32(llvm::IRBuilder<>& b, llvm::Value* x) {
  ExactArithmetic exact(b);
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* x2 = b.CreateFMul(x, x);
  // Near zero: (2 / sqrt(pi)) x (1 - x^2/3 + x^4/10 - x^6/42 + x^8/216).
  llvm::Value* series = b.CreateFMul(
      b.CreateFMul(x, Const(x, 1.1283791670955126)),
      Horner(b, x2, {1.0, -1.0 / 3, 1.0 / 10, -1.0 / 42, 1.0 / 216}));
  // Elsewhere: 1 - t (a1 + t (a2 + ...)) exp(-x^2), t = 1 / (1 + p |x|).
  llvm::Value* t =
      b.CreateFDiv(Const(x, 1.0),
                   b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()},
                                     {ax, Const(x, 0.3275911), Const(x, 1.0)}));
  llvm::Value* poly =
      b.CreateFMul(t, Horner(b, t,
                             {0.254829592, -0.284496736, 1.421413741,
                              -1.453152027, 1.061405429}));
  llvm::Value* tail = b.CreateFSub(
      Const(x, 1.0), b.CreateFMul(poly, EmitFastExpF32(b, b.CreateFNeg(x2))));
  llvm::Value* signed_tail =
      b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, tail, x);
  return b.CreateSelect(b.CreateFCmpOLT(ax, Const(x, 0.25)), series,
                        signed_tail);
}

llvm::Value* EmitFastTanhF32(llvm::IRBuilder<>& b, llvm::Value* x) {
  ExactArithmetic exact(b);
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  // Near zero: x (1 - x^2/3 + 2x^4/15 - 17x^6/315).
  llvm::Value* series = b.CreateFMul(
      x, Horner(b, b.CreateFMul(x, x), {1.0, -1.0 / 3, 2.0 / 15, -17.0 / 315}));
  // Elsewhere: 1 - 2 / (exp(2|x|) + 1); exp's +inf gives exactly 1.
  llvm::Value* e = EmitFastExpF32(b, b.CreateFAdd(ax, ax));
  llvm::Value* magnitude =
      b.CreateFSub(Const(x, 1.0),
                   b.CreateFDiv(Const(x, 2.0), b.CreateFAdd(e, Const(x, 1.0))));
  llvm::Value* signed_magnitude =
      b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, magnitude, x);
  llvm::Value* result = b.CreateSelect(b.CreateFCmpOLT(ax, Const(x, 0.125)),
                                       series, signed_magnitude);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

}  // namespace lathe::codegen_internal
