#include "compiler/lower/simplify_stmts.h"

#include <utility>
#include <vector>

#include "compiler/arith/int_bounds.h"
#include "compiler/arith/simplify.h"

namespace lathe {
namespace {

bool IsEmpty(const StmtPtr& s) {
  if (s == nullptr) return true;
  const SeqNode* seq = s->as<SeqNode>();
  return seq != nullptr && seq->stmts.empty();
}

void SimplifyIn(StmtPtr* slot, VarRanges* ranges) {
  StmtNode* s = slot->get();
  if (s == nullptr) return;
  switch (s->kind) {
    case StmtKind::kFor: {
      auto* f = s->as<ForNode>();
      (*ranges)[f->var.get()] = Interval::Extent(f->extent);
      SimplifyIn(&f->body, ranges);
      ranges->erase(f->var.get());
      return;
    }
    case StmtKind::kIf: {
      auto* i = s->as<IfNode>();
      i->cond = Simplify(i->cond, *ranges);
      if (ProvablyTrue(i->cond, *ranges)) {
        StmtPtr then_case = std::move(i->then_case);
        *slot = std::move(then_case);
        SimplifyIn(slot, ranges);
        return;
      }
      if (ProvablyFalse(i->cond, *ranges)) {
        StmtPtr else_case = std::move(i->else_case);
        *slot = else_case ? std::move(else_case) : MakeSeq({});
        SimplifyIn(slot, ranges);
        return;
      }
      SimplifyIn(&i->then_case, ranges);
      SimplifyIn(&i->else_case, ranges);
      if (IsEmpty(i->else_case)) i->else_case = nullptr;
      if (IsEmpty(i->then_case) && i->else_case == nullptr) *slot = MakeSeq({});
      return;
    }
    case StmtKind::kSeq: {
      auto* seq = s->as<SeqNode>();
      std::vector<StmtPtr> kept;
      for (StmtPtr& child : seq->stmts) {
        SimplifyIn(&child, ranges);
        if (!IsEmpty(child)) kept.push_back(std::move(child));
      }
      seq->stmts = std::move(kept);
      if (seq->stmts.size() == 1) {
        StmtPtr only = std::move(seq->stmts[0]);
        *slot = std::move(only);
      }
      return;
    }
    default:
      MutateOwnExprs(s, [&](const Expr& e) { return Simplify(e, *ranges); });
      for (StmtPtr* child : ChildSlots(s)) SimplifyIn(child, ranges);
      return;
  }
}

}  // namespace

absl::Status SimplifyStmts(Program* program) {
  VarRanges ranges;
  if (program->root != nullptr) SimplifyIn(&program->root->body, &ranges);
  return absl::OkStatus();
}

}  // namespace lathe
