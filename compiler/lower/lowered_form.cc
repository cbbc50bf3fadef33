#include "compiler/lower/lowered_form.h"

#include "absl/strings/str_cat.h"

namespace lathe {

bool IsAllocScope(const BlockNode& block) {
  return block.iter_vars.empty() && block.iter_values.empty() &&
         block.predicate.is_int_imm() && block.predicate.int_value() == 1 &&
         block.init == nullptr && block.annotations.empty();
}

absl::Status VerifyLowered(const Program& program) {
  if (program.root == nullptr) {
    return absl::InternalError("lowered form: the program has no root block");
  }
  if (!program.root->iter_vars.empty() || program.root->init != nullptr) {
    return absl::InternalError(
        "lowered form: the root block has iteration variables or an init");
  }
  absl::Status status;
  if (program.root->body == nullptr) return status;
  VisitStmts(static_cast<const StmtNode*>(program.root->body.get()),
             [&](const StmtNode* s) {
               if (!status.ok()) return false;
               const BlockNode* b = s->as<BlockNode>();
               if (b != nullptr && !IsAllocScope(*b)) {
                 status = absl::InternalError(absl::StrCat(
                     "lowered form: block \"", b->name,
                     "\" is not an allocation scope (it has iteration "
                     "variables, a predicate, an init or annotations)"));
               }
               return true;
             });
  return status;
}

}  // namespace lathe
