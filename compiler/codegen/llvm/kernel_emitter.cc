// KernelEmitter's functions, buffers, statements, loops and explicit vectors
// (see kernel_emitter.h; expressions are in expr_emission.cc, parallel loops
// in parallel_outlining.cc).
#include "compiler/codegen/llvm/kernel_emitter.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/codegen/llvm/fast_math.h"
#include "compiler/codegen/vector_legality.h"
#include "compiler/ir/expr_functor.h"

namespace lathe {
namespace codegen_internal {
namespace {

// Unrolled loops up to this extent are emitted body by body; longer ones get
// a loop with llvm.loop.unroll.full (the unroller applies its own limit).
constexpr int64_t kMaxInlineUnroll = 64;
// Unrolled loops nest multiplicatively: past this many copies of a body the
// unroll hint is dropped (the loop stays a loop), so that a schedule that
// unrolls every loop of a nest cannot make one kernel take minutes to
// compile. Unrolling never changes what a program computes.
constexpr int64_t kMaxUnrolledCopies = 512;

}  // namespace

std::string SanitizeIdentifier(const std::string& name) {
  std::string out;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_';
    out.push_back(ok ? c : '_');
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out = "k_" + out;
  return out;
}

KernelEmitter::KernelEmitter(const Program& program, const Target& target,
                             llvm::Module* module)
    : program_(program),
      target_(target),
      module_(module),
      ctx_(module->getContext()),
      b_(ctx_) {
  llvm::FastMathFlags fmf;
  fmf.setAllowContract(true);
  fmf.setAllowReassoc(true);
  fmf.setNoSignedZeros(true);
  fmf.setApproxFunc(true);
  b_.setFastMathFlags(fmf);
  i1_ = b_.getInt1Ty();
  i32_ = b_.getInt32Ty();
  i64_ = b_.getInt64Ty();
  ptr_ = llvm::PointerType::get(ctx_, 0);
}

absl::Status KernelEmitter::Emit(const std::string& name, bool packed_wrapper) {
  const BlockNode* root = program_.root.get();
  if (root == nullptr) return Fail("the program has no root block");
  if (!root->iter_vars.empty() || root->init != nullptr) {
    return Fail(
        "the root block has iteration variables or an init: not a lowered "
        "program");
  }
  std::vector<BufferPtr> params = program_.Params();
  std::vector<llvm::Type*> arg_types(params.size(), ptr_);
  auto* fn_type = llvm::FunctionType::get(i32_, arg_types, /*isVarArg=*/false);
  llvm::Function* fn = llvm::Function::Create(
      fn_type, llvm::Function::ExternalLinkage, name, module_);
  SetFunctionAttributes(fn);
  for (size_t i = 0; i < params.size(); ++i) {
    llvm::Argument* arg = fn->getArg(static_cast<unsigned>(i));
    arg->setName(SanitizeIdentifier(params[i]->name));
    // Parameters never overlap (docs/architecture.md, "Tensor layouts and the
    // C ABI of compiled kernels") and the kernel keeps no pointer.
    arg->addAttr(llvm::Attribute::NoAlias);
    arg->addAttr(llvm::Attribute::NoCapture);
    if (i < program_.inputs.size()) arg->addAttr(llvm::Attribute::ReadOnly);
    if (buffers_.count(params[i].get())) {
      return Fail(absl::StrCat("buffer ", params[i]->name,
                               " is listed twice among the parameters"));
    }
    buffers_[params[i].get()] = arg;
  }
  BeginFunction(fn);
  LATHE_RETURN_IF_ERROR(EmitAllocations(*root));
  if (root->body != nullptr) LATHE_RETURN_IF_ERROR(EmitStmt(*root->body));
  FinishFunction();
  if (packed_wrapper) EmitPackedWrapper(fn, params.size());
  return absl::OkStatus();
}

absl::Status KernelEmitter::Fail(const std::string& message) const {
  return absl::FailedPreconditionError(
      absl::StrCat("codegen of ", program_.name, ": ", message));
}

void KernelEmitter::SetFunctionAttributes(llvm::Function* fn) {
  fn->addFnAttr("target-cpu", target_.cpu);
  if (!target_.features.empty())
    fn->addFnAttr("target-features", target_.FeatureString());
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addFnAttr("no-trapping-math", "true");
}

// ---- functions -------------------------------------------------------------

void KernelEmitter::BeginFunction(llvm::Function* fn) {
  fs_ = FunctionState();
  fs_.fn = fn;
  fs_.entry = llvm::BasicBlock::Create(ctx_, "entry", fn);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx_, "body", fn);
  fs_.exit = llvm::BasicBlock::Create(ctx_, "exit", fn);
  b_.SetInsertPoint(fs_.entry);
  fs_.status = b_.CreateAlloca(i32_, nullptr, "status");
  b_.CreateStore(b_.getInt32(0), fs_.status);
  b_.CreateBr(body);
  b_.SetInsertPoint(body);
}

void KernelEmitter::FinishFunction() {
  b_.CreateBr(fs_.exit);
  // A failed heap allocation skips the body: the status says -1 and every
  // buffer is freed (lathe_free ignores null).
  if (!fs_.heap.empty()) {
    llvm::Instruction* term = fs_.entry->getTerminator();
    llvm::BasicBlock* body = term->getSuccessor(0);
    b_.SetInsertPoint(term);
    llvm::Value* any_null = b_.getFalse();
    for (llvm::Value* p : fs_.heap)
      any_null = b_.CreateOr(any_null, b_.CreateIsNull(p));
    b_.CreateStore(b_.CreateSelect(any_null, b_.getInt32(-1), b_.getInt32(0)),
                   fs_.status);
    b_.CreateCondBr(any_null, fs_.exit, body);
    term->eraseFromParent();
  }
  b_.SetInsertPoint(fs_.exit);
  for (llvm::Value* p : fs_.heap) b_.CreateCall(RuntimeFree(), {p});
  b_.CreateRet(b_.CreateLoad(i32_, fs_.status));
}

llvm::IRBuilder<>::InsertPoint KernelEmitter::EntryInsertPoint() {
  return llvm::IRBuilder<>::InsertPoint(
      fs_.entry, fs_.entry->getTerminator()->getIterator());
}

llvm::FunctionCallee KernelEmitter::RuntimeAlloc() {
  llvm::FunctionCallee f =
      module_->getOrInsertFunction("lathe_alloc", ptr_, i64_, i64_);
  // Fresh memory, like malloc's: no other pointer reaches it.
  if (auto* fn = llvm::dyn_cast<llvm::Function>(f.getCallee()))
    fn->addRetAttr(llvm::Attribute::NoAlias);
  return f;
}

llvm::FunctionCallee KernelEmitter::RuntimeFree() {
  return module_->getOrInsertFunction("lathe_free", b_.getVoidTy(), ptr_);
}

void KernelEmitter::EmitPackedWrapper(llvm::Function* kernel, size_t num_args) {
  auto* type = llvm::FunctionType::get(i32_, {ptr_}, false);
  llvm::Function* fn =
      llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                             kernel->getName() + "_packed", module_);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
  std::vector<llvm::Value*> args;
  for (size_t i = 0; i < num_args; ++i) {
    llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(ptr_, fn->getArg(0), i);
    args.push_back(b_.CreateLoad(ptr_, slot));
  }
  b_.CreateRet(b_.CreateCall(kernel, args));
}

// ---- buffers ---------------------------------------------------------------

absl::StatusOr<llvm::Type*> KernelEmitter::ValueType(DType t,
                                                     const std::string& what) {
  switch (t.code()) {
    case DType::Code::kFloat:
      if (t.bits() == 32) return b_.getFloatTy();
      if (t.bits() == 64) return b_.getDoubleTy();
      if (t.bits() == 16) return b_.getHalfTy();
      break;
    case DType::Code::kInt:
    case DType::Code::kUInt:
      if (t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64) {
        return static_cast<llvm::Type*>(b_.getIntNTy(t.bits()));
      }
      break;
    case DType::Code::kBool:
      return static_cast<llvm::Type*>(i1_);
  }
  return Fail(
      absl::StrCat("dtype ", t.ToString(), " of ", what, " is not supported"));
}

absl::StatusOr<llvm::Type*> KernelEmitter::StorageType(
    DType t, const std::string& what) {
  if (t.is_bool()) return static_cast<llvm::Type*>(b_.getInt8Ty());
  return ValueType(t, what);
}

absl::Status KernelEmitter::EmitAllocations(const BlockNode& block) {
  for (const BufferPtr& buf : block.alloc_buffers) {
    LATHE_ASSIGN_OR_RETURN(llvm::Type * elem,
                           StorageType(buf->dtype, "buffer " + buf->name));
    int64_t bytes = buf->NumElements() * std::max(1, buf->dtype.bytes());
    auto saved = b_.saveIP();
    b_.restoreIP(EntryInsertPoint());
    llvm::Value* storage;
    if (bytes <= kMaxStackBufferBytes) {
      llvm::AllocaInst* a = b_.CreateAlloca(
          llvm::ArrayType::get(elem, static_cast<uint64_t>(std::max<int64_t>(
                                         1, buf->NumElements()))),
          nullptr, SanitizeIdentifier(buf->name));
      a->setAlignment(llvm::Align(64));
      storage = a;
    } else {
      storage =
          b_.CreateCall(RuntimeAlloc(), {b_.getInt64(bytes), b_.getInt64(64)},
                        SanitizeIdentifier(buf->name));
      fs_.heap.push_back(storage);
    }
    b_.restoreIP(saved);
    buffers_[buf.get()] = storage;
  }
  return absl::OkStatus();
}

absl::StatusOr<llvm::Value*> KernelEmitter::ElementPointer(
    const BufferPtr& buf, const std::vector<Expr>& indices, llvm::Type** elem) {
  auto it = buffers_.find(buf.get());
  if (it == buffers_.end()) {
    return Fail(absl::StrCat(
        "buffer ", buf->name,
        " is neither a parameter nor allocated by an enclosing block"));
  }
  if (indices.size() != buf->shape.size()) {
    return Fail(absl::StrCat("access to buffer ", buf->name, " has ",
                             indices.size(), " indices for ", buf->shape.size(),
                             " dimensions"));
  }
  LATHE_ASSIGN_OR_RETURN(*elem, StorageType(buf->dtype, "buffer " + buf->name));
  // Row-major flattening in int64; nsw lets SCEV see affine addresses.
  llvm::Value* offset = nullptr;
  for (size_t d = 0; d < indices.size(); ++d) {
    LATHE_ASSIGN_OR_RETURN(llvm::Value * idx, EmitExpr(indices[d]));
    idx = b_.CreateSExtOrTrunc(idx, i64_);
    if (offset == nullptr) {
      offset = idx;
    } else {
      offset = b_.CreateAdd(
          b_.CreateMul(offset, b_.getInt64(buf->shape[d]), "", false, true),
          idx, "", false, true);
    }
  }
  if (offset == nullptr) offset = b_.getInt64(0);
  return b_.CreateInBoundsGEP(*elem, it->second, offset);
}

// ---- statements ------------------------------------------------------------

absl::Status KernelEmitter::EmitStmt(const StmtNode& stmt) {
  switch (stmt.kind) {
    case StmtKind::kSeq:
      for (const StmtPtr& s : stmt.as<SeqNode>()->stmts) {
        if (s != nullptr) LATHE_RETURN_IF_ERROR(EmitStmt(*s));
      }
      return absl::OkStatus();
    case StmtKind::kFor:
      return EmitFor(*stmt.as<ForNode>());
    case StmtKind::kStore:
      return EmitStore(*stmt.as<StoreNode>());
    case StmtKind::kIf:
      return EmitIf(*stmt.as<IfNode>());
    case StmtKind::kBlock: {
      const BlockNode& block = *stmt.as<BlockNode>();
      if (!block.iter_vars.empty() || block.init != nullptr) {
        return Fail(absl::StrCat(
            "block ", block.name,
            " is not an allocation scope: lower the program first"));
      }
      if (!block.predicate.is_int_imm() || block.predicate.int_value() == 0) {
        return Fail(absl::StrCat("block ", block.name,
                                 " has a predicate: lower the program first"));
      }
      LATHE_RETURN_IF_ERROR(EmitAllocations(block));
      return block.body ? EmitStmt(*block.body) : absl::OkStatus();
    }
  }
  return Fail("unknown statement kind");
}

absl::Status KernelEmitter::EmitStore(const StoreNode& store) {
  llvm::Type* elem = nullptr;
  LATHE_ASSIGN_OR_RETURN(llvm::Value * value, EmitExpr(store.value));
  LATHE_ASSIGN_OR_RETURN(llvm::Value * ptr,
                         ElementPointer(store.buffer, store.indices, &elem));
  if (store.buffer->dtype.is_bool()) value = b_.CreateZExt(value, elem);
  if (value->getType() != elem) {
    return Fail(absl::StrCat("store to ", store.buffer->name,
                             " of a value of another dtype (",
                             store.value.dtype().ToString(), ")"));
  }
  b_.CreateAlignedStore(value, ptr,
                        llvm::Align(std::max(1, store.buffer->dtype.bytes())));
  return absl::OkStatus();
}

absl::Status KernelEmitter::EmitIf(const IfNode& node) {
  LATHE_ASSIGN_OR_RETURN(llvm::Value * cond, EmitExpr(node.cond));
  cond = ToBool(cond);
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx_, "then", fs_.fn);
  llvm::BasicBlock* else_bb =
      node.else_case ? llvm::BasicBlock::Create(ctx_, "else", fs_.fn) : nullptr;
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "endif", fs_.fn);
  b_.CreateCondBr(cond, then_bb, else_bb ? else_bb : done);
  b_.SetInsertPoint(then_bb);
  if (node.then_case) LATHE_RETURN_IF_ERROR(EmitStmt(*node.then_case));
  b_.CreateBr(done);
  if (else_bb) {
    b_.SetInsertPoint(else_bb);
    LATHE_RETURN_IF_ERROR(EmitStmt(*node.else_case));
    b_.CreateBr(done);
  }
  b_.SetInsertPoint(done);
  return absl::OkStatus();
}

absl::Status KernelEmitter::EmitFor(const ForNode& loop) {
  const std::string& name = loop.var->name;
  if (!loop.var.is_var()) return Fail("a loop variable is not a Var");
  if (vars_.count(loop.var.get())) {
    return Fail(
        absl::StrCat("loop ", name, " rebinds a variable already in scope"));
  }
  if (loop.extent <= 0 || loop.body == nullptr) return absl::OkStatus();
  ranges_[loop.var.get()] = Interval::Extent(loop.extent);
  absl::Status st;
  switch (loop.for_kind) {
    case ForKind::kThreadBinding:
      st = Fail(absl::StrCat("loop ", name, " is bound to ", loop.thread_tag,
                             ": thread binding needs a GPU target, not ",
                             target_.ToString()));
      break;
    case ForKind::kUnrolled: {
      const int64_t outer_copies = unrolled_copies_;
      // A long loop around other loops is left to LLVM's own judgement:
      // forcing it to unroll fully multiplies whole nests.
      bool body_has_loops = false;
      VisitStmts(loop.body.get(), [&](const StmtNode* s) {
        body_has_loops |= s->kind == StmtKind::kFor;
        return !body_has_loops;
      });
      if (outer_copies * loop.extent > kMaxUnrolledCopies ||
          (body_has_loops && loop.extent > kMaxInlineUnroll)) {
        st = EmitLoop(loop, "", 0);
        break;
      }
      unrolled_copies_ = outer_copies * loop.extent;
      if (loop.extent <= kMaxInlineUnroll) {
        for (int64_t i = 0; i < loop.extent && st.ok(); ++i) {
          vars_[loop.var.get()] = b_.getInt64(i);
          st = EmitStmt(*loop.body);
        }
      } else {
        st = EmitLoop(loop, "llvm.loop.unroll.full", 0);
      }
      unrolled_copies_ = outer_copies;
      break;
    }
    case ForKind::kVectorized: {
      // Straight-line stores of unit-stride accesses become vector IR
      // directly (see EmitVectorized); anything else goes to LLVM's loop
      // vectorizer.
      if (int64_t lanes =
              ExplicitVectorWidth(loop, target_.VectorLanesF32(), ranges_);
          lanes > 1) {
        st = EmitVectorized(loop, lanes);
        break;
      }
      // The widest power of two that fits the extent and a vector register.
      int64_t width = 1;
      while (width * 2 <= loop.extent && width * 2 <= target_.VectorLanesF32())
        width *= 2;
      st = width > 1 ? EmitLoop(loop, "llvm.loop.vectorize.enable", width)
                     : EmitLoop(loop, "", 0);
      break;
    }
    case ForKind::kParallel:
      st = target_.num_threads > 1 ? EmitParallel(loop) : EmitLoop(loop, "", 0);
      break;
    case ForKind::kSerial:
      st = EmitLoop(loop, "", 0);
      break;
  }
  vars_.erase(loop.var.get());
  ranges_.erase(loop.var.get());
  return st;
}

absl::Status KernelEmitter::EmitLoop(const ForNode& loop,
                                     const std::string& hint, int64_t width) {
  const std::string& name = loop.var->name;
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx_, name, fs_.fn);
  llvm::BasicBlock* after =
      llvm::BasicBlock::Create(ctx_, name + ".end", fs_.fn);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* iv = b_.CreatePHI(i64_, 2, name);
  iv->addIncoming(b_.getInt64(0), pre);
  vars_[loop.var.get()] = iv;
  LATHE_RETURN_IF_ERROR(EmitStmt(*loop.body));
  llvm::Value* next = b_.CreateAdd(iv, b_.getInt64(1), name + ".next",
                                   /*HasNUW=*/true, /*HasNSW=*/true);
  llvm::Value* more = b_.CreateICmpSLT(next, b_.getInt64(loop.extent));
  llvm::BranchInst* br = b_.CreateCondBr(more, header, after);
  iv->addIncoming(next, b_.GetInsertBlock());
  if (!hint.empty()) {
    std::vector<llvm::Metadata*> ops = {nullptr};
    ops.push_back(
        llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, hint),
                                 llvm::ConstantAsMetadata::get(b_.getTrue())}));
    if (hint == "llvm.loop.unroll.full")
      ops.back() = llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, hint)});
    if (width > 0) {
      ops.push_back(llvm::MDNode::get(
          ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.width"),
                 llvm::ConstantAsMetadata::get(
                     b_.getInt32(static_cast<uint32_t>(width)))}));
    }
    llvm::MDNode* md = llvm::MDNode::getDistinct(ctx_, ops);
    md->replaceOperandWith(0, md);
    br->setMetadata(llvm::LLVMContext::MD_loop, md);
  }
  b_.SetInsertPoint(after);
  return absl::OkStatus();
}

// ---- explicit vectors ------------------------------------------------------

absl::Status KernelEmitter::EmitVectorized(const ForNode& loop, int64_t lanes) {
  std::vector<const StoreNode*> stores;
  bool ok = true;
  CollectStraightLineStores(loop.body.get(), &stores, &ok);
  auto emit_chunk = [&](llvm::Value* base) -> absl::Status {
    vars_[loop.var.get()] = base;
    for (const StoreNode* s : stores) {
      LATHE_ASSIGN_OR_RETURN(llvm::Value * value,
                             EmitVectorExpr(s->value, loop.var, lanes));
      llvm::Type* elem = nullptr;
      LATHE_ASSIGN_OR_RETURN(llvm::Value * ptr,
                             ElementPointer(s->buffer, s->indices, &elem));
      b_.CreateAlignedStore(value, ptr, llvm::Align(4));
    }
    return absl::OkStatus();
  };
  const int64_t chunks = loop.extent / lanes;
  if (chunks <= kMaxInlineVectorChunks) {
    for (int64_t c = 0; c < chunks; ++c)
      LATHE_RETURN_IF_ERROR(emit_chunk(b_.getInt64(c * lanes)));
    return absl::OkStatus();
  }
  const std::string& name = loop.var->name;
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* header =
      llvm::BasicBlock::Create(ctx_, name + ".vec", fs_.fn);
  llvm::BasicBlock* after =
      llvm::BasicBlock::Create(ctx_, name + ".vec.end", fs_.fn);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* iv = b_.CreatePHI(i64_, 2, name + ".chunk");
  iv->addIncoming(b_.getInt64(0), pre);
  LATHE_RETURN_IF_ERROR(
      emit_chunk(b_.CreateMul(iv, b_.getInt64(lanes), name, true, true)));
  llvm::Value* next =
      b_.CreateAdd(iv, b_.getInt64(1), name + ".chunk.next", true, true);
  b_.CreateCondBr(b_.CreateICmpSLT(next, b_.getInt64(chunks)), header, after);
  iv->addIncoming(next, b_.GetInsertBlock());
  b_.SetInsertPoint(after);
  return absl::OkStatus();
}

absl::StatusOr<llvm::Value*> KernelEmitter::EmitVectorExpr(const Expr& e,
                                                           const Expr& var,
                                                           int64_t lanes) {
  const auto n = static_cast<unsigned>(lanes);
  if (!UsesVar(e, var)) {
    LATHE_ASSIGN_OR_RETURN(llvm::Value * v, EmitExpr(e));
    return b_.CreateVectorSplat(n, v);
  }
  switch (e.kind()) {
    case ExprKind::kLoad: {
      llvm::Type* elem = nullptr;
      LATHE_ASSIGN_OR_RETURN(llvm::Value * ptr,
                             ElementPointer(e->buffer, e->operands, &elem));
      return static_cast<llvm::Value*>(b_.CreateAlignedLoad(
          llvm::FixedVectorType::get(elem, n), ptr, llvm::Align(4)));
    }
    case ExprKind::kSelect: {
      LATHE_ASSIGN_OR_RETURN(llvm::Value * c, EmitExpr(e.operand(0)));
      LATHE_ASSIGN_OR_RETURN(llvm::Value * tv,
                             EmitVectorExpr(e.operand(1), var, lanes));
      LATHE_ASSIGN_OR_RETURN(llvm::Value * ev,
                             EmitVectorExpr(e.operand(2), var, lanes));
      return b_.CreateSelect(ToBool(c), tv, ev);
    }
    case ExprKind::kCall: {
      // The unary float32 functions vector_legality.h admits.
      LATHE_ASSIGN_OR_RETURN(llvm::Value * a,
                             EmitVectorExpr(e.operand(0), var, lanes));
      const std::string& fn = e->name;
      if (fn == "exp") return EmitFastExpF32(b_, a);
      if (fn == "erf") return EmitFastErfF32(b_, a);
      if (fn == "tanh") return EmitFastTanhF32(b_, a);
      if (fn == "abs") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a);
      if (fn == "sqrt")
        return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a);
      return Fail(absl::StrCat("cannot vectorize ", e.ToString()));
    }
    default:
      break;
  }
  LATHE_ASSIGN_OR_RETURN(llvm::Value * a,
                         EmitVectorExpr(e.operand(0), var, lanes));
  LATHE_ASSIGN_OR_RETURN(llvm::Value * bv,
                         EmitVectorExpr(e.operand(1), var, lanes));
  switch (e.kind()) {
    case ExprKind::kAdd:
      return b_.CreateFAdd(a, bv);
    case ExprKind::kSub:
      return b_.CreateFSub(a, bv);
    case ExprKind::kMul:
      return b_.CreateFMul(a, bv);
    case ExprKind::kDiv:
      return b_.CreateFDiv(a, bv);
    case ExprKind::kMin:
      return b_.CreateSelect(b_.CreateFCmpOLT(bv, a), bv, a);
    case ExprKind::kMax:
      return b_.CreateSelect(b_.CreateFCmpOLT(a, bv), bv, a);
    default:
      break;
  }
  return Fail(absl::StrCat("cannot vectorize ", e.ToString()));
}

}  // namespace codegen_internal
}  // namespace lathe
