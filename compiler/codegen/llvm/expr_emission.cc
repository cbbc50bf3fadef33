// KernelEmitter's expressions: each Expr to an LLVM value (see
// kernel_emitter.h and codegen_llvm.h for the mapping).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/llvm/fast_math.h"
#include "compiler/codegen/llvm/kernel_emitter.h"
#include "compiler/codegen/vector_legality.h"
#include "llvm/IR/Intrinsics.h"

namespace lathe {
namespace codegen_internal {

llvm::Value* KernelEmitter::ToBool(llvm::Value* v) {
  if (v->getType() == i1_) return v;
  if (v->getType()->isFloatingPointTy()) {
    return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
  }
  return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
}

bool KernelEmitter::IsSafeToSpeculate(const Expr& e) {
  return lathe::IsSafeToSpeculate(e, ranges_);
}

absl::StatusOr<llvm::Value*> KernelEmitter::EmitBranchy(
    llvm::Value* cond, const Expr& then_e, const Expr& else_e,
    llvm::Value* else_value) {
  llvm::BasicBlock* then_bb =
      llvm::BasicBlock::Create(ctx_, "sel.then", fs_.fn);
  llvm::BasicBlock* else_bb =
      llvm::BasicBlock::Create(ctx_, "sel.else", fs_.fn);
  llvm::BasicBlock* join = llvm::BasicBlock::Create(ctx_, "sel.join", fs_.fn);
  b_.CreateCondBr(cond, then_bb, else_bb);
  b_.SetInsertPoint(then_bb);
  LATHE_ASSIGN_OR_RETURN(llvm::Value * tv, EmitExpr(then_e));
  llvm::BasicBlock* then_end = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(else_bb);
  llvm::Value* ev = else_value;
  if (ev == nullptr) {
    LATHE_ASSIGN_OR_RETURN(ev, EmitExpr(else_e));
  }
  llvm::BasicBlock* else_end = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  if (tv->getType() != ev->getType())
    return Fail("select arms of different types");
  llvm::PHINode* phi = b_.CreatePHI(tv->getType(), 2);
  phi->addIncoming(tv, then_end);
  phi->addIncoming(ev, else_end);
  return static_cast<llvm::Value*>(phi);
}

absl::StatusOr<llvm::Value*> KernelEmitter::EmitExpr(const Expr& e) {
  if (!e.defined()) return Fail("undefined expression");
  const DType t = e.dtype();
  switch (e.kind()) {
    case ExprKind::kIntImm: {
      LATHE_ASSIGN_OR_RETURN(llvm::Type * ty, ValueType(t, e.ToString()));
      if (ty->isFloatingPointTy())
        return llvm::ConstantFP::get(ty, static_cast<double>(e.int_value()));
      return static_cast<llvm::Value*>(llvm::ConstantInt::get(
          ty, static_cast<uint64_t>(e.int_value()), true));
    }
    case ExprKind::kFloatImm: {
      LATHE_ASSIGN_OR_RETURN(llvm::Type * ty, ValueType(t, e.ToString()));
      if (!ty->isFloatingPointTy())
        return Fail("a float immediate of a non-float dtype");
      return static_cast<llvm::Value*>(
          llvm::ConstantFP::get(ty, e->float_value));
    }
    case ExprKind::kVar: {
      auto it = vars_.find(e.get());
      if (it == vars_.end())
        return Fail(
            absl::StrCat("variable ", e->name, " is used outside its loop"));
      return it->second;
    }
    case ExprKind::kAdd:
    case ExprKind::kSub:
    case ExprKind::kMul:
    case ExprKind::kDiv:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod:
    case ExprKind::kMin:
    case ExprKind::kMax:
      return EmitArith(e);
    case ExprKind::kEq:
    case ExprKind::kNe:
    case ExprKind::kLt:
    case ExprKind::kLe:
    case ExprKind::kGt:
    case ExprKind::kGe:
      return EmitCompare(e);
    case ExprKind::kAnd:
    case ExprKind::kOr: {
      bool is_and = e.kind() == ExprKind::kAnd;
      LATHE_ASSIGN_OR_RETURN(llvm::Value * a, EmitExpr(e.operand(0)));
      a = ToBool(a);
      if (IsSafeToSpeculate(e.operand(1))) {
        LATHE_ASSIGN_OR_RETURN(llvm::Value * bv, EmitExpr(e.operand(1)));
        bv = ToBool(bv);
        return is_and ? b_.CreateAnd(a, bv) : b_.CreateOr(a, bv);
      }
      // a && b == a ? b : false;  a || b == a ? true : b.
      if (is_and) return EmitBranchy(a, e.operand(1), Expr(), b_.getFalse());
      LATHE_ASSIGN_OR_RETURN(
          llvm::Value * r,
          EmitBranchy(b_.CreateNot(a), e.operand(1), Expr(), b_.getTrue()));
      return ToBool(r);
    }
    case ExprKind::kNot: {
      LATHE_ASSIGN_OR_RETURN(llvm::Value * a, EmitExpr(e.operand(0)));
      return b_.CreateNot(ToBool(a));
    }
    case ExprKind::kSelect: {
      LATHE_ASSIGN_OR_RETURN(llvm::Value * c, EmitExpr(e.operand(0)));
      c = ToBool(c);
      if (IsSafeToSpeculate(e.operand(1)) && IsSafeToSpeculate(e.operand(2))) {
        LATHE_ASSIGN_OR_RETURN(llvm::Value * tv, EmitExpr(e.operand(1)));
        LATHE_ASSIGN_OR_RETURN(llvm::Value * ev, EmitExpr(e.operand(2)));
        return b_.CreateSelect(c, tv, ev);
      }
      return EmitBranchy(c, e.operand(1), e.operand(2), nullptr);
    }
    case ExprKind::kCast:
      return EmitCast(e);
    case ExprKind::kCall:
      return EmitCall(e);
    case ExprKind::kLoad: {
      llvm::Type* elem = nullptr;
      LATHE_ASSIGN_OR_RETURN(llvm::Value * ptr,
                             ElementPointer(e->buffer, e->operands, &elem));
      llvm::Value* v = b_.CreateAlignedLoad(
          elem, ptr, llvm::Align(std::max(1, e->buffer->dtype.bytes())));
      if (e->buffer->dtype.is_bool())
        v = b_.CreateICmpNE(v, llvm::ConstantInt::get(elem, 0));
      return v;
    }
  }
  return Fail(absl::StrCat("unsupported expression ", e.ToString()));
}

absl::StatusOr<llvm::Value*> KernelEmitter::EmitArith(const Expr& e) {
  LATHE_ASSIGN_OR_RETURN(llvm::Value * a, EmitExpr(e.operand(0)));
  LATHE_ASSIGN_OR_RETURN(llvm::Value * bv, EmitExpr(e.operand(1)));
  if (a->getType() != bv->getType()) {
    return Fail(absl::StrCat("operands of different types in ", e.ToString()));
  }
  if (a->getType()->isFloatingPointTy()) {
    switch (e.kind()) {
      case ExprKind::kAdd:
        return b_.CreateFAdd(a, bv);
      case ExprKind::kSub:
        return b_.CreateFSub(a, bv);
      case ExprKind::kMul:
        return b_.CreateFMul(a, bv);
      case ExprKind::kDiv:
        return b_.CreateFDiv(a, bv);
      case ExprKind::kFloorDiv:
        return FloorOf(b_.CreateFDiv(a, bv));
      case ExprKind::kFloorMod:
        return b_.CreateFSub(a,
                             b_.CreateFMul(FloorOf(b_.CreateFDiv(a, bv)), bv));
      // As the interpreter: min(a, b) = b < a ? b : a (x86 minps order).
      case ExprKind::kMin:
        return b_.CreateSelect(b_.CreateFCmpOLT(bv, a), bv, a);
      case ExprKind::kMax:
        return b_.CreateSelect(b_.CreateFCmpOLT(a, bv), bv, a);
      default:
        break;
    }
    return Fail(absl::StrCat("unsupported float arithmetic ", e.ToString()));
  }
  const bool is_unsigned = e.dtype().code() == DType::Code::kUInt;
  // nsw only on int64: the IR promises index arithmetic never overflows,
  // while narrower types wrap by definition.
  const bool nsw = e.dtype().bits() == 64 && !is_unsigned;
  switch (e.kind()) {
    case ExprKind::kAdd:
      return b_.CreateAdd(a, bv, "", false, nsw);
    case ExprKind::kSub:
      return b_.CreateSub(a, bv, "", false, nsw);
    case ExprKind::kMul:
      return b_.CreateMul(a, bv, "", false, nsw);
    case ExprKind::kMin:
      return b_.CreateBinaryIntrinsic(
          is_unsigned ? llvm::Intrinsic::umin : llvm::Intrinsic::smin, a, bv);
    case ExprKind::kMax:
      return b_.CreateBinaryIntrinsic(
          is_unsigned ? llvm::Intrinsic::umax : llvm::Intrinsic::smax, a, bv);
    case ExprKind::kDiv:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod: {
      bool is_div = e.kind() != ExprKind::kFloorMod;
      // Non-negative dividend and positive divisor (the common index case
      // i / 4, i % 4): floor and truncation agree, and unsigned division
      // by a constant power of two is a shift.
      bool divisor_positive =
          e.operand(1).is_int_imm() && e.operand(1).int_value() > 0;
      if (is_unsigned ||
          (divisor_positive && BoundOf(e.operand(0), ranges_).min >= 0)) {
        return is_div ? b_.CreateUDiv(a, bv) : b_.CreateURem(a, bv);
      }
      // Floor semantics: q = a / b rounded down; r = a - q * b has the sign
      // of b. Truncating division is one too high when the remainder is
      // non-zero and its sign differs from b's.
      llvm::Value* q = b_.CreateSDiv(a, bv);
      llvm::Value* r = b_.CreateSRem(a, bv);
      llvm::Value* zero = llvm::ConstantInt::get(a->getType(), 0);
      llvm::Value* adjust =
          b_.CreateAnd(b_.CreateICmpNE(r, zero),
                       b_.CreateICmpNE(b_.CreateICmpSLT(r, zero),
                                       b_.CreateICmpSLT(bv, zero)));
      if (is_div) return b_.CreateSub(q, b_.CreateZExt(adjust, a->getType()));
      return b_.CreateSelect(adjust, b_.CreateAdd(r, bv), r);
    }
    default:
      break;
  }
  return Fail(absl::StrCat("unsupported integer arithmetic ", e.ToString()));
}

llvm::Value* KernelEmitter::FloorOf(llvm::Value* v) {
  return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, v);
}

absl::StatusOr<llvm::Value*> KernelEmitter::EmitCompare(const Expr& e) {
  LATHE_ASSIGN_OR_RETURN(llvm::Value * a, EmitExpr(e.operand(0)));
  LATHE_ASSIGN_OR_RETURN(llvm::Value * bv, EmitExpr(e.operand(1)));
  if (a->getType() != bv->getType()) {
    return Fail(absl::StrCat("operands of different types in ", e.ToString()));
  }
  using P = llvm::CmpInst::Predicate;
  if (a->getType()->isFloatingPointTy()) {
    // Ordered comparisons except !=, as in C (NaN != x is true).
    P p = P::FCMP_OEQ;
    switch (e.kind()) {
      case ExprKind::kEq:
        p = P::FCMP_OEQ;
        break;
      case ExprKind::kNe:
        p = P::FCMP_UNE;
        break;
      case ExprKind::kLt:
        p = P::FCMP_OLT;
        break;
      case ExprKind::kLe:
        p = P::FCMP_OLE;
        break;
      case ExprKind::kGt:
        p = P::FCMP_OGT;
        break;
      default:
        p = P::FCMP_OGE;
        break;
    }
    return b_.CreateFCmp(p, a, bv);
  }
  bool u =
      e.operand(0).dtype().code() == DType::Code::kUInt || a->getType() == i1_;
  P p = P::ICMP_EQ;
  switch (e.kind()) {
    case ExprKind::kEq:
      p = P::ICMP_EQ;
      break;
    case ExprKind::kNe:
      p = P::ICMP_NE;
      break;
    case ExprKind::kLt:
      p = u ? P::ICMP_ULT : P::ICMP_SLT;
      break;
    case ExprKind::kLe:
      p = u ? P::ICMP_ULE : P::ICMP_SLE;
      break;
    case ExprKind::kGt:
      p = u ? P::ICMP_UGT : P::ICMP_SGT;
      break;
    default:
      p = u ? P::ICMP_UGE : P::ICMP_SGE;
      break;
  }
  return b_.CreateICmp(p, a, bv);
}

absl::StatusOr<llvm::Value*> KernelEmitter::EmitCast(const Expr& e) {
  const DType to = e.dtype();
  const DType from = e.operand(0).dtype();
  LATHE_ASSIGN_OR_RETURN(llvm::Value * v, EmitExpr(e.operand(0)));
  LATHE_ASSIGN_OR_RETURN(llvm::Type * ty, ValueType(to, e.ToString()));
  if (to.is_bool()) return ToBool(v);
  const bool from_signed = from.code() == DType::Code::kInt;
  if (to.is_float()) {
    if (from.is_float()) return b_.CreateFPCast(v, ty);
    return from_signed ? b_.CreateSIToFP(v, ty) : b_.CreateUIToFP(v, ty);
  }
  if (from.is_float()) {
    return to.code() == DType::Code::kUInt ? b_.CreateFPToUI(v, ty)
                                           : b_.CreateFPToSI(v, ty);
  }
  return b_.CreateIntCast(v, ty, from_signed);
}

absl::StatusOr<llvm::Value*> KernelEmitter::EmitCall(const Expr& e) {
  const std::string& fn = e->name;
  const size_t arity = fn == "pow" ? 2 : 1;
  if (e.num_operands() != arity) {
    return Fail(absl::StrCat("call ", e.ToString(), " takes ", arity,
                             arity == 1 ? " argument" : " arguments"));
  }
  LATHE_ASSIGN_OR_RETURN(llvm::Value * a, EmitExpr(e.operand(0)));
  if (fn == "abs" && !a->getType()->isFloatingPointTy()) {
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, a, b_.getFalse());
  }
  if (!a->getType()->isFloatingPointTy()) {
    return Fail(
        absl::StrCat("call ", e.ToString(), " of a non-float argument"));
  }
  if (a->getType()->isFloatTy()) {
    // float32: inline IR that vectorizes (fast_math.h), not libm calls.
    if (fn == "exp") return EmitFastExpF32(b_, a);
    if (fn == "erf") return EmitFastErfF32(b_, a);
    if (fn == "tanh") return EmitFastTanhF32(b_, a);
  }
  if (fn == "exp") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, a);
  if (fn == "log") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::log, a);
  if (fn == "sqrt") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a);
  if (fn == "abs") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a);
  if (fn == "pow") {
    LATHE_ASSIGN_OR_RETURN(llvm::Value * y, EmitExpr(e.operand(1)));
    if (y->getType() != a->getType()) {
      return Fail(
          absl::StrCat("call ", e.ToString(), " of arguments of two types"));
    }
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, a, y);
  }
  if (fn == "tanh" || fn == "erf") {
    // No LLVM intrinsic: libm's tanh / erf for float64.
    if (!a->getType()->isDoubleTy())
      return Fail(absl::StrCat(fn, " of a half value"));
    llvm::FunctionCallee callee =
        module_->getOrInsertFunction(fn, a->getType(), a->getType());
    llvm::CallInst* call = b_.CreateCall(callee, {a});
    call->setDoesNotAccessMemory();
    call->setDoesNotThrow();
    return static_cast<llvm::Value*>(call);
  }
  return Fail(absl::StrCat("unknown function \"", fn,
                           "\" (known: exp, log, sqrt, abs, tanh, erf, pow)"));
}

}  // namespace codegen_internal
}  // namespace lathe
