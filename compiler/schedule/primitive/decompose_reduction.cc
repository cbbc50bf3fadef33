#include "compiler/schedule/primitive/decompose_reduction.h"

#include <algorithm>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/arith/simplify.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/analysis/block_predicate.h"
#include "compiler/schedule/analysis/loop_ranges.h"
#include "compiler/schedule/analysis/stage_builder.h"
#include "compiler/schedule/instruction_kind.h"

namespace lathe::primitive {

namespace {

bool InSet(const std::set<const ExprNode*>& set, const Expr& var) {
  return set.count(var.get()) > 0;
}

}  // namespace

absl::StatusOr<std::string> DecomposeReduction(Program* program,
                                               const std::string& block_name,
                                               const std::string& loop_name) {
  BlockNode* block = program->FindBlock(block_name);
  if (block == nullptr || block == program->root.get()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "decompose_reduction: no block named \"", block_name, "\""));
  }
  ForNode* loop = program->FindLoop(loop_name);
  if (loop == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("decompose_reduction: no loop named \"", loop_name, "\""));
  }
  auto fail = [&](const std::string& why) {
    return absl::FailedPreconditionError(
        absl::StrCat("decompose_reduction: block \"", block_name,
                     "\" at loop \"", loop_name, "\": ", why));
  };
  if (block->init == nullptr) {
    return fail(
        "the block has no init (not a reduction, or already decomposed)");
  }
  // 1. The loops above `loop` and those at or below it.
  std::vector<ForNode*> loops = program->LoopsAbove(block);
  auto at = std::find(loops.begin(), loops.end(), loop);
  if (at == loops.end()) return fail("the loop is not above the block");
  std::vector<ForNode*> below(at, loops.end());
  std::set<const ExprNode*> below_vars;
  for (ForNode* l : below) below_vars.insert(l->var.get());

  // 2. Which loops the spatial and the reduction bindings use.
  std::set<const ExprNode*> spatial_uses, reduce_uses;
  std::set<const ExprNode*> reduce_iter_vars;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    bool spatial = block->iter_vars[i].type == IterType::kSpatial;
    if (!spatial) reduce_iter_vars.insert(block->iter_vars[i].var.get());
    VisitExpr(block->iter_values[i], [&](const Expr& e) {
      if (e.is_var()) (spatial ? spatial_uses : reduce_uses).insert(e.get());
    });
  }
  for (auto it = loops.begin(); it != at; ++it) {
    if (InSet(reduce_uses, (*it)->var)) {
      return fail(absl::StrCat("loop \"", (*it)->var->name,
                               "\" above it is a reduction loop of the block"));
    }
  }
  for (ForNode* l : below) {
    // A loop that no binding uses repeats the whole reduction (a block
    // computed at a consumer's loop recomputes it per iteration); the init
    // must run before each repetition, so it cannot move above that loop.
    if (!InSet(spatial_uses, l->var) && !InSet(reduce_uses, l->var) &&
        l->extent > 1) {
      return fail(absl::StrCat(
          "loop \"", l->var->name,
          "\" repeats the reduction: no binding of the block uses it"));
    }
    if (InSet(spatial_uses, l->var) && InSet(reduce_uses, l->var)) {
      return fail(
          absl::StrCat("loop \"", l->var->name,
                       "\" is used by both spatial and reduction bindings"));
    }
  }
  VarRanges ranges = LoopRangesAbove(*program, block);
  VarMap below_to_zero;
  for (ForNode* l : below) below_to_zero[l->var] = Expr(int64_t{0});
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    if (block->iter_vars[i].type != IterType::kReduce) continue;
    Expr first =
        Simplify(Substitute(block->iter_values[i], below_to_zero), ranges);
    if (!first.is_int_imm() || first.int_value() != 0) {
      return fail(absl::StrCat("reduction binding ",
                               block->iter_values[i].ToString(),
                               " is not 0 when the loops under it start"));
    }
  }
  bool init_uses_reduce = false;
  VisitStmts(block->init.get(), [&](StmtNode* s) {
    VisitOwnExprs(*s, [&](const Expr& e) {
      if (UsesAnyVar(
              e, [&](const Expr& v) { return InSet(reduce_iter_vars, v); })) {
        init_uses_reduce = true;
      }
    });
    return true;
  });
  if (init_uses_reduce)
    return fail("the init uses a reduction iteration variable");
  // The init moves before the other blocks under `loop`: none may write what
  // it reads or writes.
  std::set<const Buffer*> init_buffers;
  for (const BufferPtr& b : BuffersRead(*block->init))
    init_buffers.insert(b.get());
  for (const BufferPtr& b : BuffersWritten(*block->init))
    init_buffers.insert(b.get());
  for (BlockNode* other : BlocksIn(loop)) {
    if (other == block) continue;
    for (const BufferPtr& b : BuffersWritten(*other)) {
      if (init_buffers.count(b.get())) {
        return fail(absl::StrCat("block \"", other->name,
                                 "\" under the loop writes ", b->name,
                                 ", which the init uses"));
      }
    }
  }

  // 3. Copies of the loops at or below `loop` that spatial bindings use.
  NameAllocator names(*program);
  VarMap copies;
  std::vector<ForNode*> copied;
  for (ForNode* l : below) {
    if (!InSet(spatial_uses, l->var)) continue;
    copies[l->var] = Var(names.Fresh(absl::StrCat(l->var->name, "_init")));
    copied.push_back(l);
  }

  // 4. The predicate of the init block (see the header).
  VarMap iter_to_binding;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    iter_to_binding[block->iter_vars[i].var] = block->iter_values[i];
  }
  Expr init_predicate = True();
  for (const Expr& conjunct :
       Conjuncts(Substitute(block->predicate, iter_to_binding))) {
    bool uses_other_below = UsesAnyVar(conjunct, [&](const Expr& v) {
      return InSet(below_vars, v) && copies.count(v) == 0;
    });
    if (!uses_other_below) {
      init_predicate = And(init_predicate, Substitute(conjunct, copies));
      continue;
    }
    bool uses_copied = UsesAnyVar(
        conjunct, [&](const Expr& v) { return copies.count(v) > 0; });
    if (uses_copied ||
        !ProvablyTrue(Substitute(conjunct, below_to_zero), ranges)) {
      return fail(absl::StrCat("cannot tell which elements the predicate ",
                               conjunct.ToString(), " initializes"));
    }
  }

  // 5. The init block, under the copied loops.
  auto init = std::make_unique<BlockNode>();
  init->name = names.Fresh(absl::StrCat(block_name, "_init"));
  VarMap new_iter_vars;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    if (iv.type != IterType::kSpatial) continue;
    Expr var =
        Var(names.Fresh(absl::StrCat(iv.var->name, "_init")), iv.var.dtype());
    new_iter_vars[iv.var] = var;
    init->iter_vars.push_back({var, iv.extent, IterType::kSpatial});
    init->iter_values.push_back(Substitute(block->iter_values[i], copies));
  }
  init->predicate = init_predicate;
  init->body = std::move(block->init);
  MutateAllExprs(init->body.get(),
                 [&](const Expr& e) { return Substitute(e, new_iter_vars); });
  std::string init_name = init->name;
  StmtPtr nest = std::move(init);
  for (size_t i = copied.size(); i-- > 0;) {
    auto copy = MakeFor(copies[copied[i]->var], copied[i]->extent,
                        std::move(nest), copied[i]->for_kind);
    copy->thread_tag = copied[i]->thread_tag;
    copy->annotations = copied[i]->annotations;
    nest = std::move(copy);
  }
  StmtNode* const init_nest = nest.get();
  if (!InsertBeside(program, loop, std::move(nest), /*after=*/false)) {
    return absl::InternalError(
        "decompose_reduction: cannot place the init block");
  }
  SimplifyBindings(program, init_nest);
  return init_name;
}

}  // namespace lathe::primitive

namespace lathe {

const InstructionKind& DecomposeReductionInstruction() {
  // Inputs: the block and the loop. Output: the new init block.
  static const auto* const kind = new InstructionKind{
      "decompose_reduction",
      {},
      /*samples=*/false,
      [](const ReplayContext& c) -> absl::Status {
        LATHE_ASSIGN_OR_RETURN(BlockRV block, c.Block(0));
        LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(1));
        LATHE_ASSIGN_OR_RETURN(BlockRV init,
                               c.sch->DecomposeReduction(block, loop));
        return c.Outputs({init.id});
      }};
  return *kind;
}

absl::StatusOr<BlockRV> ConcreteSchedule::DecomposeReduction(BlockRV block,
                                                             LoopRV loop) {
  LATHE_ASSIGN_OR_RETURN(std::string b, BlockName(block));
  LATHE_ASSIGN_OR_RETURN(std::string l, LoopName(loop));
  std::string created;
  LATHE_RETURN_IF_ERROR(Apply([&](Program* p) -> absl::Status {
    LATHE_ASSIGN_OR_RETURN(created, primitive::DecomposeReduction(p, b, l));
    return absl::OkStatus();
  }));
  BlockRV init = NewBlockRV(created);
  Record(DecomposeReductionInstruction(), {InputOf(block), InputOf(loop)}, {},
         {init.id});
  return init;
}

}  // namespace lathe
