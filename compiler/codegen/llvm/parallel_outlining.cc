// KernelEmitter's parallel loops: a parallel loop's body outlined into a
// task function that lathe_parallel_for (compiler/runtime/lathe_runtime.h)
// runs once per iteration, with a closure of what the body captures (see
// kernel_emitter.h).
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/llvm/kernel_emitter.h"
#include "compiler/ir/expr_functor.h"

namespace lathe {
namespace codegen_internal {

absl::Status KernelEmitter::EmitParallel(const ForNode& loop) {
  // 1. What the body captures.
  std::set<const ExprNode*> var_uses;
  std::set<const Buffer*> buf_uses;
  VisitStmts(loop.body.get(), [&](const StmtNode* s) {
    if (const auto* st = s->as<StoreNode>()) buf_uses.insert(st->buffer.get());
    VisitOwnExprs(*s,
                  [&](const Expr& e) { CollectUses(e, &var_uses, &buf_uses); });
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
      call_args.push_back(
          b_.CreateLoad(ptr_, b_.CreateStructGEP(closure_type, env, field++)));
    }
    for (size_t i = 0; i < cap_vars.size(); ++i) {
      call_args.push_back(
          b_.CreateLoad(i64_, b_.CreateStructGEP(closure_type, env, field++)));
    }
    b_.CreateRet(b_.CreateCall(body_fn, call_args));
  }
  b_.restoreIP(saved_ip);

  // 4. The call; a failing task's code becomes the kernel's status.
  llvm::FunctionCallee parallel_for = module_->getOrInsertFunction(
      "lathe_parallel_for", i32_, i64_, ptr_, ptr_);
  llvm::Value* rc =
      b_.CreateCall(parallel_for, {b_.getInt64(loop.extent), task_fn, closure});
  llvm::Value* old = b_.CreateLoad(i32_, fs_.status);
  b_.CreateStore(b_.CreateSelect(b_.CreateICmpEQ(old, b_.getInt32(0)), rc, old),
                 fs_.status);
  return absl::OkStatus();
}

void KernelEmitter::CollectUses(const Expr& e, std::set<const ExprNode*>* vars,
                                std::set<const Buffer*>* bufs) {
  if (!e.defined()) return;
  if (e.is_var()) vars->insert(e.get());
  if (e.is(ExprKind::kLoad)) bufs->insert(e->buffer.get());
  for (const Expr& op : e->operands) CollectUses(op, vars, bufs);
}

}  // namespace codegen_internal
}  // namespace lathe
