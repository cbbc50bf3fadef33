// Lowered Program -> LLVM IR (see codegen_llvm.h for the mapping).
//
// One KernelEmitter walks the statement tree once. Each LLVM function it
// builds (the kernel, and one per outlined parallel loop) has the same shape:
//   entry:  allocas, heap allocations, closure loads   (FunctionState::entry)
//   body:   the statements
//   exit:   lathe_free of the heap buffers; return the status
// so that allocations happen once per call, however deep the allocating scope
// sits: a scope's storage need not survive between its executions (the IR
// says it is fresh and unwritten each time), so hoisting it is free.
#include "compiler/codegen/llvm/codegen_llvm.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/arith/int_bounds.h"
#include "compiler/codegen/llvm/llvm_module.h"
#include "compiler/ir/expr_functor.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace lathe {
namespace {

// Unrolled loops up to this extent are emitted body by body; longer ones get
// a loop with llvm.loop.unroll.full (the unroller applies its own limit).
constexpr int64_t kMaxInlineUnroll = 64;
// Unrolled loops nest multiplicatively: past this many copies of a body the
// unroll hint is dropped (the loop stays a loop), so that a schedule that
// unrolls every loop of a nest cannot make one kernel take minutes to
// compile. Unrolling never changes what a program computes.
constexpr int64_t kMaxUnrolledCopies = 512;

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

// Per LLVM function being built.
struct FunctionState {
  llvm::Function* fn = nullptr;
  llvm::BasicBlock* entry = nullptr;  // allocations; ends with br to the body
  llvm::BasicBlock* exit = nullptr;
  llvm::Value* status = nullptr;   // i32 alloca: the return value
  std::vector<llvm::Value*> heap;  // lathe_alloc results, freed at exit
};

class KernelEmitter {
 public:
  KernelEmitter(const Program& program, const Target& target,
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

  absl::Status Emit(const std::string& name, bool packed_wrapper) {
    const BlockNode* root = program_.root.get();
    if (root == nullptr) return Fail("the program has no root block");
    if (!root->iter_vars.empty() || root->init != nullptr) {
      return Fail(
          "the root block has iteration variables or an init: not a lowered "
          "program");
    }
    std::vector<BufferPtr> params = program_.Params();
    std::vector<llvm::Type*> arg_types(params.size(), ptr_);
    auto* fn_type =
        llvm::FunctionType::get(i32_, arg_types, /*isVarArg=*/false);
    llvm::Function* fn = llvm::Function::Create(
        fn_type, llvm::Function::ExternalLinkage, name, module_);
    SetFunctionAttributes(fn);
    for (size_t i = 0; i < params.size(); ++i) {
      llvm::Argument* arg = fn->getArg(static_cast<unsigned>(i));
      arg->setName(SanitizeIdentifier(params[i]->name));
      // Parameters never overlap (DESIGN.md) and the kernel keeps no pointer.
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

 private:
  absl::Status Fail(const std::string& message) const {
    return absl::FailedPreconditionError(
        absl::StrCat("codegen of ", program_.name, ": ", message));
  }

  void SetFunctionAttributes(llvm::Function* fn) {
    fn->addFnAttr("target-cpu", target_.cpu);
    if (!target_.features.empty())
      fn->addFnAttr("target-features", target_.FeatureString());
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    fn->addFnAttr("no-trapping-math", "true");
  }

  // ---- functions ---------------------------------------------------------

  void BeginFunction(llvm::Function* fn) {
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

  void FinishFunction() {
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

  // Inserts before the entry block's terminator.
  llvm::IRBuilder<>::InsertPoint EntryInsertPoint() {
    return llvm::IRBuilder<>::InsertPoint(
        fs_.entry, fs_.entry->getTerminator()->getIterator());
  }

  llvm::FunctionCallee RuntimeAlloc() {
    llvm::FunctionCallee f =
        module_->getOrInsertFunction("lathe_alloc", ptr_, i64_, i64_);
    // Fresh memory, like malloc's: no other pointer reaches it.
    if (auto* fn = llvm::dyn_cast<llvm::Function>(f.getCallee()))
      fn->addRetAttr(llvm::Attribute::NoAlias);
    return f;
  }
  llvm::FunctionCallee RuntimeFree() {
    return module_->getOrInsertFunction("lathe_free", b_.getVoidTy(), ptr_);
  }

  void EmitPackedWrapper(llvm::Function* kernel, size_t num_args) {
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

  // ---- buffers -------------------------------------------------------------

  absl::StatusOr<llvm::Type*> ValueType(DType t, const std::string& what) {
    switch (t.code()) {
      case DType::Code::kFloat:
        if (t.bits() == 32) return b_.getFloatTy();
        if (t.bits() == 64) return b_.getDoubleTy();
        if (t.bits() == 16) return b_.getHalfTy();
        break;
      case DType::Code::kInt:
      case DType::Code::kUInt:
        if (t.bits() == 8 || t.bits() == 16 || t.bits() == 32 ||
            t.bits() == 64) {
          return static_cast<llvm::Type*>(b_.getIntNTy(t.bits()));
        }
        break;
      case DType::Code::kBool:
        return static_cast<llvm::Type*>(i1_);
    }
    return Fail(absl::StrCat("dtype ", t.ToString(), " of ", what,
                             " is not supported"));
  }
  // Bools are bytes in memory.
  absl::StatusOr<llvm::Type*> StorageType(DType t, const std::string& what) {
    if (t.is_bool()) return static_cast<llvm::Type*>(b_.getInt8Ty());
    return ValueType(t, what);
  }

  absl::Status EmitAllocations(const BlockNode& block) {
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

  absl::StatusOr<llvm::Value*> ElementPointer(const BufferPtr& buf,
                                              const std::vector<Expr>& indices,
                                              llvm::Type** elem) {
    auto it = buffers_.find(buf.get());
    if (it == buffers_.end()) {
      return Fail(absl::StrCat(
          "buffer ", buf->name,
          " is neither a parameter nor allocated by an enclosing block"));
    }
    if (indices.size() != buf->shape.size()) {
      return Fail(absl::StrCat("access to buffer ", buf->name, " has ",
                               indices.size(), " indices for ",
                               buf->shape.size(), " dimensions"));
    }
    LATHE_ASSIGN_OR_RETURN(*elem,
                           StorageType(buf->dtype, "buffer " + buf->name));
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

  // ---- statements ----------------------------------------------------------

  absl::Status EmitStmt(const StmtNode& stmt) {
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
          return Fail(
              absl::StrCat("block ", block.name,
                           " has a predicate: lower the program first"));
        }
        LATHE_RETURN_IF_ERROR(EmitAllocations(block));
        return block.body ? EmitStmt(*block.body) : absl::OkStatus();
      }
    }
    return Fail("unknown statement kind");
  }

  absl::Status EmitStore(const StoreNode& store) {
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
    b_.CreateAlignedStore(
        value, ptr, llvm::Align(std::max(1, store.buffer->dtype.bytes())));
    return absl::OkStatus();
  }

  absl::Status EmitIf(const IfNode& node) {
    LATHE_ASSIGN_OR_RETURN(llvm::Value * cond, EmitExpr(node.cond));
    cond = ToBool(cond);
    llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx_, "then", fs_.fn);
    llvm::BasicBlock* else_bb =
        node.else_case ? llvm::BasicBlock::Create(ctx_, "else", fs_.fn)
                       : nullptr;
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

  absl::Status EmitFor(const ForNode& loop) {
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
        if (int64_t lanes = ExplicitVectorWidth(loop); lanes > 1) {
          st = EmitVectorized(loop, lanes);
          break;
        }
        // The widest power of two that fits the extent and a vector register.
        int64_t width = 1;
        while (width * 2 <= loop.extent &&
               width * 2 <= target_.VectorLanesF32())
          width *= 2;
        st = width > 1 ? EmitLoop(loop, "llvm.loop.vectorize.enable", width)
                       : EmitLoop(loop, "", 0);
        break;
      }
      case ForKind::kParallel:
        st = target_.num_threads > 1 ? EmitParallel(loop)
                                     : EmitLoop(loop, "", 0);
        break;
      case ForKind::kSerial:
        st = EmitLoop(loop, "", 0);
        break;
    }
    vars_.erase(loop.var.get());
    ranges_.erase(loop.var.get());
    return st;
  }

  // A bottom-tested loop (the extent is at least 1): LLVM's loop passes see
  // a canonical, rotated loop with a constant trip count.
  absl::Status EmitLoop(const ForNode& loop, const std::string& hint,
                        int64_t width) {
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
      ops.push_back(llvm::MDNode::get(
          ctx_, {llvm::MDString::get(ctx_, hint),
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

  // ---- explicit vectors ----------------------------------------------------
  //
  // A vectorized loop whose body is a sequence of float32 stores, each at a
  // unit-stride address in the loop variable (last index `var + c`, the
  // others invariant), with values built from such loads, invariant
  // subexpressions and float arithmetic, is emitted as vector IR: the loop
  // runs in chunks of `lanes` iterations, each statement once per chunk on
  // <lanes x float> values, invariant subexpressions evaluated once and
  // broadcast. This is what the loop vectorizer would do, without depending
  // on its cost model: a register tile (an unrolled loop around a vectorized
  // one over a local buffer) becomes vector loads and stores at constant
  // offsets that SROA promotes to registers. Lane-wise execution equals the
  // scalar order when every load of a buffer stored in the body reads the
  // element the store writes (same indices), which is checked.

  // Chunks up to this count are emitted one after another; more run in a loop.
  static constexpr int64_t kMaxInlineVectorChunks = 8;

  static void CollectStores(const StmtNode* s,
                            std::vector<const StoreNode*>* stores, bool* ok) {
    if (s == nullptr) return;
    if (const auto* st = s->as<StoreNode>()) {
      stores->push_back(st);
    } else if (const auto* seq = s->as<SeqNode>()) {
      for (const StmtPtr& c : seq->stmts) CollectStores(c.get(), stores, ok);
    } else {
      *ok = false;
    }
  }

  static bool IsF32(DType t) { return t.is_float() && t.bits() == 32; }

  static bool SameExpr(const Expr& a, const Expr& b) {
    if (a.get() == b.get()) return true;
    if (!a.defined() || !b.defined() || a.kind() != b.kind() ||
        !(a.dtype() == b.dtype()))
      return false;
    if (a.is_var()) return false;
    if (a->int_value != b->int_value || a->float_value != b->float_value ||
        a->name != b->name || a->buffer != b->buffer ||
        a.num_operands() != b.num_operands()) {
      return false;
    }
    for (size_t i = 0; i < a.num_operands(); ++i) {
      if (!SameExpr(a.operand(i), b.operand(i))) return false;
    }
    return true;
  }

  // e == var + (something invariant in var), with unit coefficient.
  static bool IsUnitStride(const Expr& e, const Expr& var) {
    if (e.get() == var.get()) return true;
    if (e.is(ExprKind::kAdd)) {
      bool u0 = UsesVar(e.operand(0), var), u1 = UsesVar(e.operand(1), var);
      if (u0 && !u1) return IsUnitStride(e.operand(0), var);
      if (u1 && !u0) return IsUnitStride(e.operand(1), var);
      return false;
    }
    if (e.is(ExprKind::kSub))
      return !UsesVar(e.operand(1), var) && IsUnitStride(e.operand(0), var);
    return false;
  }

  static bool IsVectorAccess(const BufferPtr& buf,
                             const std::vector<Expr>& indices,
                             const Expr& var) {
    if (!IsF32(buf->dtype) || indices.empty() ||
        indices.size() != buf->shape.size())
      return false;
    for (size_t d = 0; d + 1 < indices.size(); ++d) {
      if (UsesVar(indices[d], var)) return false;
    }
    return IsUnitStride(indices.back(), var);
  }

  struct VectorCheck {
    const Expr* var;
    std::vector<const StoreNode*> stores;
    bool StoredHere(const Buffer* b) const {
      for (const StoreNode* s : stores) {
        if (s->buffer.get() == b) return true;
      }
      return false;
    }
  };

  bool CanVectorizeExpr(const Expr& e, const VectorCheck& vc) {
    const Expr& var = *vc.var;
    if (!UsesVar(e, var)) {
      // Evaluated once per chunk: it must not read what the body writes.
      bool reads_stored = false;
      VisitExpr(e, [&](const Expr& x) {
        if (x.is(ExprKind::kLoad) && vc.StoredHere(x->buffer.get()))
          reads_stored = true;
      });
      return !reads_stored;
    }
    if (!IsF32(e.dtype())) return false;
    switch (e.kind()) {
      case ExprKind::kLoad: {
        if (!IsVectorAccess(e->buffer, e->operands, var)) return false;
        for (const StoreNode* s : vc.stores) {
          if (s->buffer != e->buffer) continue;
          for (size_t d = 0; d < s->indices.size(); ++d) {
            if (!SameExpr(s->indices[d], e.operand(d))) return false;
          }
        }
        return true;
      }
      case ExprKind::kAdd:
      case ExprKind::kSub:
      case ExprKind::kMul:
      case ExprKind::kDiv:
      case ExprKind::kMin:
      case ExprKind::kMax:
        return CanVectorizeExpr(e.operand(0), vc) &&
               CanVectorizeExpr(e.operand(1), vc);
      case ExprKind::kSelect:
        return !UsesVar(e.operand(0), var) && IsSafeToSpeculate(e.operand(1)) &&
               IsSafeToSpeculate(e.operand(2)) &&
               CanVectorizeExpr(e.operand(1), vc) &&
               CanVectorizeExpr(e.operand(2), vc);
      default:
        return false;
    }
  }

  // The lanes of EmitVectorized for this loop, or 0 when it does not apply.
  int64_t ExplicitVectorWidth(const ForNode& loop) {
    int64_t lanes = target_.VectorLanesF32();
    while (lanes > 1 && loop.extent % lanes != 0) lanes /= 2;
    if (lanes < 4) return 0;
    VectorCheck vc{&loop.var, {}};
    bool ok = true;
    CollectStores(loop.body.get(), &vc.stores, &ok);
    if (!ok || vc.stores.empty()) return 0;
    for (const StoreNode* s : vc.stores) {
      if (!IsVectorAccess(s->buffer, s->indices, loop.var) ||
          !CanVectorizeExpr(s->value, vc))
        return 0;
    }
    return lanes;
  }

  absl::Status EmitVectorized(const ForNode& loop, int64_t lanes) {
    std::vector<const StoreNode*> stores;
    bool ok = true;
    CollectStores(loop.body.get(), &stores, &ok);
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

  // A <lanes x float> value of e for the chunk whose first iteration is
  // bound to var (checked by CanVectorizeExpr).
  absl::StatusOr<llvm::Value*> EmitVectorExpr(const Expr& e, const Expr& var,
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

  // Outlines the body into `int NAME_parN(int64_t task, void* closure)`; the
  // closure holds every buffer pointer and loop variable of the enclosing
  // scopes that the body uses.
  absl::Status EmitParallel(const ForNode& loop) {
    // 1. What the body captures.
    std::set<const ExprNode*> var_uses;
    std::set<const Buffer*> buf_uses;
    VisitStmts(loop.body.get(), [&](const StmtNode* s) {
      if (const auto* st = s->as<StoreNode>())
        buf_uses.insert(st->buffer.get());
      VisitOwnExprs(
          *s, [&](const Expr& e) { CollectUses(e, &var_uses, &buf_uses); });
      return true;
    });
    std::vector<std::pair<const ExprNode*, llvm::Value*>> cap_vars;
    std::vector<std::pair<const Buffer*, llvm::Value*>> cap_bufs;
    for (const auto& [v, value] : vars_) {
      if (var_uses.count(v)) cap_vars.emplace_back(v, value);
    }
    for (const auto& [buf, value] : buffers_) {
      if (buf_uses.count(buf)) cap_bufs.emplace_back(buf, value);
    }
    std::vector<llvm::Type*> fields(cap_bufs.size(), ptr_);
    fields.insert(fields.end(), cap_vars.size(), i64_);
    llvm::StructType* closure_type = llvm::StructType::get(ctx_, fields);

    // 2. The closure, filled at the call site.
    auto saved_ip = b_.saveIP();
    b_.restoreIP(EntryInsertPoint());
    llvm::AllocaInst* closure =
        b_.CreateAlloca(closure_type, nullptr, loop.var->name + ".closure");
    b_.restoreIP(saved_ip);
    unsigned field = 0;
    for (const auto& c : cap_bufs)
      b_.CreateStore(c.second,
                     b_.CreateStructGEP(closure_type, closure, field++));
    for (const auto& c : cap_vars)
      b_.CreateStore(c.second,
                     b_.CreateStructGEP(closure_type, closure, field++));

    // 3. The outlined body, built with the emitter's state swapped out:
    //    `int NAME_parN_body(int64_t task, ptr noalias buf..., int64_t
    //    var...)`. The captured buffers are distinct parameters or allocations,
    //    so they are noalias arguments here; once the body is inlined into the
    //    task function (its only caller), the inliner keeps that knowledge as
    //    alias-scope metadata. Loading them from the closure directly would
    //    lose it, and loads would be redone after every store.
    const std::string base_name =
        absl::StrCat(fs_.fn->getName().str(), "_par", num_outlined_++);
    std::vector<llvm::Type*> body_args = {i64_};
    body_args.insert(body_args.end(), cap_bufs.size(), ptr_);
    body_args.insert(body_args.end(), cap_vars.size(), i64_);
    llvm::Function* body_fn = llvm::Function::Create(
        llvm::FunctionType::get(i32_, body_args, false),
        llvm::Function::InternalLinkage, base_name + "_body", module_);
    SetFunctionAttributes(body_fn);
    FunctionState outer_fs = fs_;
    auto outer_vars = vars_;
    auto outer_bufs = buffers_;
    BeginFunction(body_fn);
    vars_.clear();
    unsigned arg = 1;
    for (const auto& c : cap_bufs) {
      llvm::Argument* a = body_fn->getArg(arg++);
      a->addAttr(llvm::Attribute::NoAlias);
      a->addAttr(llvm::Attribute::NoCapture);
      buffers_[c.first] = a;
    }
    for (const auto& c : cap_vars) vars_[c.first] = body_fn->getArg(arg++);
    vars_[loop.var.get()] = body_fn->getArg(0);
    absl::Status st = EmitStmt(*loop.body);
    if (st.ok()) FinishFunction();
    fs_ = outer_fs;
    vars_ = std::move(outer_vars);
    buffers_ = std::move(outer_bufs);
    LATHE_RETURN_IF_ERROR(st);
    // The task function of the runtime: unpack the closure, call the body.
    auto* task_type = llvm::FunctionType::get(i32_, {i64_, ptr_}, false);
    llvm::Function* task_fn = llvm::Function::Create(
        task_type, llvm::Function::InternalLinkage, base_name, module_);
    SetFunctionAttributes(task_fn);
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", task_fn));
    {
      llvm::Value* env = task_fn->getArg(1);
      std::vector<llvm::Value*> call_args = {task_fn->getArg(0)};
      field = 0;
      for (size_t i = 0; i < cap_bufs.size(); ++i) {
        call_args.push_back(b_.CreateLoad(
            ptr_, b_.CreateStructGEP(closure_type, env, field++)));
      }
      for (size_t i = 0; i < cap_vars.size(); ++i) {
        call_args.push_back(b_.CreateLoad(
            i64_, b_.CreateStructGEP(closure_type, env, field++)));
      }
      b_.CreateRet(b_.CreateCall(body_fn, call_args));
    }
    b_.restoreIP(saved_ip);

    // 4. The call; a failing task's code becomes the kernel's status.
    llvm::FunctionCallee parallel_for = module_->getOrInsertFunction(
        "lathe_parallel_for", i32_, i64_, ptr_, ptr_);
    llvm::Value* rc = b_.CreateCall(
        parallel_for, {b_.getInt64(loop.extent), task_fn, closure});
    llvm::Value* old = b_.CreateLoad(i32_, fs_.status);
    b_.CreateStore(
        b_.CreateSelect(b_.CreateICmpEQ(old, b_.getInt32(0)), rc, old),
        fs_.status);
    return absl::OkStatus();
  }

  static void CollectUses(const Expr& e, std::set<const ExprNode*>* vars,
                          std::set<const Buffer*>* bufs) {
    if (!e.defined()) return;
    if (e.is_var()) vars->insert(e.get());
    if (e.is(ExprKind::kLoad)) bufs->insert(e->buffer.get());
    for (const Expr& op : e->operands) CollectUses(op, vars, bufs);
  }

  // ---- expressions ---------------------------------------------------------

  llvm::Value* ToBool(llvm::Value* v) {
    if (v->getType() == i1_) return v;
    if (v->getType()->isFloatingPointTy()) {
      return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
    }
    return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }

  // True when evaluating e can neither fault nor trap: its loads are provably
  // in bounds under the loop ranges and it divides only by non-zero constants.
  // Such a lazy operand is evaluated eagerly (a select, an and), which keeps
  // loops branch-free.
  bool IsSafeToSpeculate(const Expr& e) {
    if (!e.defined()) return true;
    switch (e.kind()) {
      case ExprKind::kLoad: {
        const Buffer& buf = *e->buffer;
        for (size_t d = 0; d < e.num_operands() && d < buf.shape.size(); ++d) {
          Interval iv = BoundOf(e.operand(d), ranges_);
          if (!iv.is_bounded() || iv.min < 0 || iv.max >= buf.shape[d])
            return false;
        }
        break;
      }
      case ExprKind::kDiv:
      case ExprKind::kFloorDiv:
      case ExprKind::kFloorMod:
        if (!e.dtype().is_float() &&
            !(e.operand(1).is_int_imm() && e.operand(1).int_value() > 0)) {
          return false;
        }
        break;
      default:
        break;
    }
    for (const Expr& op : e->operands) {
      if (!IsSafeToSpeculate(op)) return false;
    }
    return true;
  }

  // Evaluates `then_e` or `else_e` by branching on cond, joining with a phi.
  absl::StatusOr<llvm::Value*> EmitBranchy(llvm::Value* cond,
                                           const Expr& then_e,
                                           const Expr& else_e,
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

  absl::StatusOr<llvm::Value*> EmitExpr(const Expr& e) {
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
        if (IsSafeToSpeculate(e.operand(1)) &&
            IsSafeToSpeculate(e.operand(2))) {
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

  absl::StatusOr<llvm::Value*> EmitArith(const Expr& e) {
    LATHE_ASSIGN_OR_RETURN(llvm::Value * a, EmitExpr(e.operand(0)));
    LATHE_ASSIGN_OR_RETURN(llvm::Value * bv, EmitExpr(e.operand(1)));
    if (a->getType() != bv->getType()) {
      return Fail(
          absl::StrCat("operands of different types in ", e.ToString()));
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
          return b_.CreateFSub(
              a, b_.CreateFMul(FloorOf(b_.CreateFDiv(a, bv)), bv));
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

  llvm::Value* FloorOf(llvm::Value* v) {
    return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, v);
  }

  absl::StatusOr<llvm::Value*> EmitCompare(const Expr& e) {
    LATHE_ASSIGN_OR_RETURN(llvm::Value * a, EmitExpr(e.operand(0)));
    LATHE_ASSIGN_OR_RETURN(llvm::Value * bv, EmitExpr(e.operand(1)));
    if (a->getType() != bv->getType()) {
      return Fail(
          absl::StrCat("operands of different types in ", e.ToString()));
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
    bool u = e.operand(0).dtype().code() == DType::Code::kUInt ||
             a->getType() == i1_;
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

  absl::StatusOr<llvm::Value*> EmitCast(const Expr& e) {
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

  absl::StatusOr<llvm::Value*> EmitCall(const Expr& e) {
    const std::string& fn = e->name;
    if (e.num_operands() != 1)
      return Fail(absl::StrCat("call ", e.ToString(), " takes one argument"));
    LATHE_ASSIGN_OR_RETURN(llvm::Value * a, EmitExpr(e.operand(0)));
    if (fn == "abs" && !a->getType()->isFloatingPointTy()) {
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, a, b_.getFalse());
    }
    if (!a->getType()->isFloatingPointTy()) {
      return Fail(
          absl::StrCat("call ", e.ToString(), " of a non-float argument"));
    }
    if (fn == "exp") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, a);
    if (fn == "log") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::log, a);
    if (fn == "sqrt") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a);
    if (fn == "abs") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a);
    if (fn == "tanh") {
      // No LLVM intrinsic: libm's tanhf / tanh.
      bool f32 = a->getType()->isFloatTy();
      if (!f32 && !a->getType()->isDoubleTy())
        return Fail("tanh of a half value");
      llvm::FunctionCallee callee = module_->getOrInsertFunction(
          f32 ? "tanhf" : "tanh", a->getType(), a->getType());
      llvm::CallInst* call = b_.CreateCall(callee, {a});
      call->setDoesNotAccessMemory();
      call->setDoesNotThrow();
      return static_cast<llvm::Value*>(call);
    }
    return Fail(absl::StrCat("unknown function \"", fn,
                             "\" (known: exp, log, sqrt, abs, tanh)"));
  }

  const Program& program_;
  const Target& target_;
  llvm::Module* module_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  llvm::Type* i1_;
  llvm::Type* i32_;
  llvm::Type* i64_;
  llvm::PointerType* ptr_;
  FunctionState fs_;
  std::map<const ExprNode*, llvm::Value*> vars_;
  std::map<const Buffer*, llvm::Value*> buffers_;
  VarRanges ranges_;
  // Copies of the current statement that enclosing unrolled loops make.
  int64_t unrolled_copies_ = 1;
  int num_outlined_ = 0;
};

}  // namespace

std::string KernelFunctionName(const Program& program,
                               const CodegenOptions& options) {
  return SanitizeIdentifier(
      options.function_name.empty() ? program.name : options.function_name);
}

absl::StatusOr<std::unique_ptr<llvm::Module>> BuildModule(
    const Program& lowered, const Target& target, const CodegenOptions& options,
    llvm::TargetMachine* tm, llvm::LLVMContext* ctx) {
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module,
                         NewModule(SanitizeIdentifier(lowered.name), tm, ctx));
  LATHE_RETURN_IF_ERROR(
      AddKernelToModule(lowered, target, options, module.get()));
  return module;
}

absl::StatusOr<std::unique_ptr<llvm::Module>> NewModule(
    const std::string& name, llvm::TargetMachine* tm, llvm::LLVMContext* ctx) {
  // Remarks and warnings ("loop not vectorized") would go to stderr; a tuner
  // compiling thousands of kernels must stay quiet. Errors still surface as
  // failed passes.
  ctx->setDiagnosticHandlerCallBack([](const llvm::DiagnosticInfo&, void*) {},
                                    nullptr);
  auto module = std::make_unique<llvm::Module>(name, *ctx);
  module->setTargetTriple(tm->getTargetTriple().str());
  module->setDataLayout(tm->createDataLayout());
  return module;
}

absl::Status AddKernelToModule(const Program& lowered, const Target& target,
                               const CodegenOptions& options,
                               llvm::Module* module) {
  const std::string name = KernelFunctionName(lowered, options);
  // LLVM renames a new function whose name is taken instead of failing; a
  // library with two kernels of one name (or a kernel named like another's
  // outlined loop) would silently export the wrong symbol.
  if (module->getNamedValue(name) != nullptr ||
      (options.emit_packed_wrapper &&
       module->getNamedValue(name + "_packed") != nullptr)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "codegen of ", lowered.name, ": symbol ", name,
        " is already defined in module ", module->getName().str()));
  }
  KernelEmitter emitter(lowered, target, module);
  LATHE_RETURN_IF_ERROR(emitter.Emit(name, options.emit_packed_wrapper));
  if (llvm::Function* fn = module->getFunction(name);
      fn == nullptr || fn->getName() != name) {
    return absl::InvalidArgumentError(
        absl::StrCat("codegen of ", lowered.name, ": symbol ", name,
                     " clashes with a symbol of another kernel"));
  }
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (llvm::verifyModule(*module, &os)) {
    return absl::InternalError(
        absl::StrCat("codegen of ", lowered.name,
                     ": the generated LLVM IR is invalid: ", os.str()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> GenerateLLVMIR(const Program& lowered,
                                           const Target& target,
                                           const CodegenOptions& options,
                                           bool optimize) {
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm,
                         CreateTargetMachine(target));
  llvm::LLVMContext ctx;
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module,
                         BuildModule(lowered, target, options, tm.get(), &ctx));
  if (optimize) OptimizeModule(module.get(), tm.get());
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, nullptr);
  return os.str();
}

}  // namespace lathe
