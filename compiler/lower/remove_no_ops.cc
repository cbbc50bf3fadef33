#include "compiler/lower/remove_no_ops.h"

#include <utility>

#include "compiler/ir/expr_functor.h"

namespace lathe {
namespace {

bool IsEmpty(const StmtPtr& s) {
  if (s == nullptr) return true;
  const SeqNode* seq = s->as<SeqNode>();
  return seq != nullptr && seq->stmts.empty();
}

void RemoveIn(StmtPtr* slot) {
  StmtNode* s = slot->get();
  if (s == nullptr) return;
  for (StmtPtr* child : ChildSlots(s)) RemoveIn(child);
  ForNode* f = s->as<ForNode>();
  if (f == nullptr) return;
  if (IsEmpty(f->body) || f->extent <= 0) {
    *slot = MakeSeq({});
    return;
  }
  if (f->extent == 1) {
    VarMap zero{{f->var, IntImm(0, f->var.dtype())}};
    StmtPtr body = std::move(f->body);
    MutateAllExprs(body.get(),
                   [&](const Expr& e) { return Substitute(e, zero); });
    *slot = std::move(body);
  }
}

}  // namespace

absl::Status RemoveNoOps(Program* program) {
  if (program->root != nullptr) RemoveIn(&program->root->body);
  return absl::OkStatus();
}

}  // namespace lathe
