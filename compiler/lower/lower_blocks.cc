#include "compiler/lower/lower_blocks.h"

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/ir/expr_functor.h"

namespace lathe {
namespace {

bool IsTrue(const Expr& e) { return e.is_int_imm() && e.int_value() == 1; }

class BlockLowerer {
 public:
  // Rewrites stmt in place (or replaces it through its slot) under `bindings`,
  // the iteration variables of the enclosing lowered blocks.
  absl::Status Lower(StmtPtr* slot, const VarMap& bindings) {
    StmtNode* stmt = slot->get();
    if (stmt == nullptr) return absl::OkStatus();
    if (BlockNode* block = stmt->as<BlockNode>()) {
      return LowerBlock(slot, block, bindings);
    }
    if (!bindings.empty()) {
      MutateOwnExprs(stmt,
                     [&](const Expr& e) { return Substitute(e, bindings); });
    }
    for (StmtPtr* child : ChildSlots(stmt)) {
      LATHE_RETURN_IF_ERROR(Lower(child, bindings));
    }
    return absl::OkStatus();
  }

 private:
  absl::Status LowerBlock(StmtPtr* slot, BlockNode* block,
                          const VarMap& outer) {
    if (block->iter_values.size() != block->iter_vars.size()) {
      return absl::InternalError(
          absl::StrCat("lower_blocks: block \"", block->name, "\" has ",
                       block->iter_vars.size(), " iteration variables but ",
                       block->iter_values.size(), " bindings"));
    }
    // 1. The bindings, over loop variables only (nested blocks may bind to
    //    an enclosing block's iteration variables).
    VarMap bindings = outer;
    Expr all_reduce_zero = True();
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      Expr value = Substitute(block->iter_values[i], outer);
      bindings[block->iter_vars[i].var] = value;
      if (block->iter_vars[i].type == IterType::kReduce) {
        Expr is_zero = value == IntImm(0, value.dtype());
        all_reduce_zero =
            IsTrue(all_reduce_zero) ? is_zero : (all_reduce_zero && is_zero);
      }
    }
    // 2. Init and body, recursively.
    LATHE_RETURN_IF_ERROR(Lower(&block->init, bindings));
    LATHE_RETURN_IF_ERROR(Lower(&block->body, bindings));
    std::vector<StmtPtr> stmts;
    if (block->init != nullptr) {
      stmts.push_back(IsTrue(all_reduce_zero)
                          ? std::move(block->init)
                          : MakeIf(all_reduce_zero, std::move(block->init)));
    }
    if (block->body != nullptr) stmts.push_back(std::move(block->body));
    StmtPtr lowered = MakeSeq(std::move(stmts));
    // 3. Allocations keep their scope: the instance.
    if (!block->alloc_buffers.empty()) {
      auto scope = std::make_unique<BlockNode>();
      scope->name = block->name;
      scope->alloc_buffers = std::move(block->alloc_buffers);
      scope->body = std::move(lowered);
      lowered = std::move(scope);
    }
    // 4. The predicate guards everything, init included.
    Expr predicate = Substitute(block->predicate, bindings);
    if (!IsTrue(predicate)) lowered = MakeIf(predicate, std::move(lowered));
    *slot = std::move(lowered);
    return absl::OkStatus();
  }
};

}  // namespace

absl::Status LowerBlocks(Program* program) {
  if (program->root == nullptr) {
    return absl::InternalError("lower_blocks: the program has no root block");
  }
  BlockLowerer lowerer;
  return lowerer.Lower(&program->root->body, VarMap{});
}

}  // namespace lathe
