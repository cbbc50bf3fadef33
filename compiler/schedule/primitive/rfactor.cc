#include "compiler/schedule/primitive/rfactor.h"

#include <algorithm>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/ir/expr_equal.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/analysis/block_predicate.h"
#include "compiler/schedule/analysis/loop_ranges.h"
#include "compiler/schedule/analysis/stage_builder.h"
#include "compiler/schedule/instruction_kind.h"

namespace lathe::primitive {

namespace {

// A recognized reduction: C[indices] = combine(C[indices], rhs).
struct ReductionPattern {
  BufferPtr buffer;
  std::vector<Expr> indices;
  ExprKind combiner = ExprKind::kAdd;  // kAdd, kMax or kMin
  bool acc_first = true;               // combine(acc, rhs) or combine(rhs, acc)
  Expr rhs;
};

Expr Identity(ExprKind combiner, DType dtype) {
  switch (combiner) {
    case ExprKind::kMax:
      return MinValue(dtype);
    case ExprKind::kMin:
      return MaxValue(dtype);
    default:
      return Zero(dtype);
  }
}

const char* CombinerName(ExprKind combiner) {
  switch (combiner) {
    case ExprKind::kMax:
      return "max";
    case ExprKind::kMin:
      return "min";
    default:
      return "+";
  }
}

// Matches the block's body and init; an empty string when they match, else
// why not.
std::string MatchReduction(const BlockNode& block, ReductionPattern* out) {
  const auto* store = block.body ? block.body->as<StoreNode>() : nullptr;
  if (store == nullptr) return "its body is not a single store";
  const Expr& value = store->value;
  if (!value.is(ExprKind::kAdd) && !value.is(ExprKind::kMax) &&
      !value.is(ExprKind::kMin)) {
    return "its update is not C = C + x, max(C, x) or min(C, x)";
  }
  auto is_acc = [&](const Expr& e) {
    return e.is(ExprKind::kLoad) && e->buffer == store->buffer &&
           ExprsEqual(e->operands, store->indices);
  };
  out->buffer = store->buffer;
  out->indices = store->indices;
  out->combiner = value.kind();
  if (is_acc(value.operand(0))) {
    out->acc_first = true;
    out->rhs = value.operand(1);
  } else if (is_acc(value.operand(1))) {
    out->acc_first = false;
    out->rhs = value.operand(0);
  } else {
    return "its update does not combine the element it stores";
  }
  if (ReadsBuffer(out->rhs, store->buffer.get())) {
    return absl::StrCat("its update reads ", store->buffer->name,
                        " besides the accumulator");
  }
  const auto* init = block.init ? block.init->as<StoreNode>() : nullptr;
  if (init == nullptr) return "it has no init of a single store";
  if (init->buffer != store->buffer ||
      !ExprsEqual(init->indices, store->indices) ||
      !ExprEqual(init->value, Identity(out->combiner, store->buffer->dtype))) {
    return absl::StrCat("its init does not store the identity of ",
                        CombinerName(out->combiner),
                        " into the element it updates");
  }
  return "";
}

Expr Combine(const ReductionPattern& pattern, Expr acc, Expr rhs) {
  return pattern.acc_first
             ? MakeBinary(pattern.combiner, std::move(acc), std::move(rhs))
             : MakeBinary(pattern.combiner, std::move(rhs), std::move(acc));
}

std::vector<Expr> InsertAt(std::vector<Expr> indices, int64_t axis,
                           Expr index) {
  indices.insert(indices.begin() + axis, std::move(index));
  return indices;
}

}  // namespace

absl::StatusOr<std::string> RFactor(Program* program,
                                    const std::string& loop_name,
                                    int64_t factor_axis) {
  ForNode* loop = program->FindLoop(loop_name);
  if (loop == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("rfactor: no loop named \"", loop_name, "\""));
  }
  std::vector<BlockNode*> blocks = BlocksIn(loop);
  if (blocks.size() != 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("rfactor: loop \"", loop_name, "\" has ", blocks.size(),
                     " blocks under it, expected 1"));
  }
  BlockNode* block = blocks[0];
  const std::string block_name = block->name;
  auto fail = [&](const std::string& why) {
    return absl::FailedPreconditionError(
        absl::StrCat("rfactor: loop \"", loop_name, "\" of block \"",
                     block_name, "\": ", why));
  };
  if (program->EnclosingBlock(block) != program->root.get()) {
    return fail("the block is not at the root scope");
  }

  // 1. The reduction variable bound with the loop.
  int bound = -1;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    if (!UsesVar(block->iter_values[i], loop->var)) continue;
    if (block->iter_vars[i].type != IterType::kReduce) {
      return fail(absl::StrCat("spatial iteration variable \"",
                               block->iter_vars[i].var->name,
                               "\" is bound to it"));
    }
    if (bound >= 0)
      return fail("more than one reduction variable is bound to it");
    bound = static_cast<int>(i);
  }
  if (bound < 0) return fail("no binding of the block uses it");
  const IterVar reduce_var = block->iter_vars[bound];
  const Expr binding = block->iter_values[bound];

  // 2. The reduction pattern, written at the spatial variables.
  ReductionPattern pattern;
  if (std::string why = MatchReduction(*block, &pattern); !why.empty()) {
    return fail(absl::StrCat("not a recognized reduction: ", why));
  }
  const BufferPtr& out = pattern.buffer;
  const int64_t rank = static_cast<int64_t>(out->shape.size());
  int64_t num_spatial = 0;
  for (const IterVar& iv : block->iter_vars)
    num_spatial += iv.type == IterType::kSpatial;
  {
    std::set<const ExprNode*> used;
    bool whole = static_cast<int64_t>(pattern.indices.size()) == rank &&
                 num_spatial == rank;
    for (size_t d = 0; whole && d < pattern.indices.size(); ++d) {
      bool found = false;
      for (const IterVar& iv : block->iter_vars) {
        found |= iv.var.same_as(pattern.indices[d]) &&
                 iv.type == IterType::kSpatial && iv.extent == out->shape[d];
      }
      whole = found && used.insert(pattern.indices[d].get()).second;
    }
    if (!whole) {
      return fail(absl::StrCat(
          "the block does not write ", out->name,
          " at its spatial iteration variables, one per dimension"));
    }
  }
  if (factor_axis < 0 || factor_axis > rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rfactor: factor_axis ", factor_axis, " is out of range [0, ", rank,
        "] for buffer \"", out->name, "\""));
  }

  // 3. The other loops of the binding: each becomes a reduction variable.
  std::vector<ForNode*> loops = program->LoopsAbove(block);
  std::vector<ForNode*> others;
  for (ForNode* l : loops) {
    if (l != loop && UsesVar(binding, l->var)) others.push_back(l);
  }
  bool foreign = UsesAnyVar(binding, [&](const Expr& v) {
    return std::none_of(loops.begin(), loops.end(),
                        [&](ForNode* l) { return l->var.same_as(v); });
  });
  if (foreign)
    return fail(absl::StrCat("binding ", binding.ToString(),
                             " uses a variable "
                             "that is not a loop of the block"));
  for (ForNode* l : others) {
    for (size_t i = 0; i < block->iter_values.size(); ++i) {
      if (static_cast<int>(i) != bound &&
          UsesVar(block->iter_values[i], l->var)) {
        return fail(absl::StrCat("loop \"", l->var->name, "\" of binding ",
                                 binding.ToString(),
                                 " is used by another binding too"));
      }
    }
  }

  // 4. The predicate: tail guards only, and every partial result must have a
  // first iteration (the other loops of the binding at 0) that runs.
  VarRanges ranges = LoopRangesAbove(*program, block);
  for (const Expr& conjunct : Conjuncts(block->predicate)) {
    int guarded = TailGuardedIterVar(*block, conjunct, ranges);
    if (guarded < 0) {
      return fail(absl::StrCat("predicate ", conjunct.ToString(),
                               " is not a split tail guard"));
    }
    if (guarded != bound) continue;
    VarMap others_to_zero;
    for (ForNode* l : others) others_to_zero[l->var] = Expr(int64_t{0});
    if (!ProvablyTrue(Substitute(binding, others_to_zero) < reduce_var.extent,
                      ranges)) {
      return fail(absl::StrCat(
          "some iterations of the loop run no instance (predicate ",
          conjunct.ToString(),
          "), their partial results would never "
          "be initialized"));
    }
  }
  StmtNode* top = TopLevelStmt(*program, block);
  if (top == nullptr) return fail("the block is not inside the root's body");
  for (BlockNode* other : BlocksIn(top)) {
    if (other == block) continue;
    BlockAccesses acc = AccessesOf(*other);
    for (const auto* list : {&acc.reads, &acc.writes}) {
      for (const BufferAccess& a : *list) {
        if (a.buffer == out) {
          return fail(absl::StrCat("block \"", other->name, "\" accesses ",
                                   out->name, " in the same loop nest"));
        }
      }
    }
  }

  // 5. The rfactor buffer and block (B rewritten in place).
  NameAllocator names(*program);
  std::string rf_name = names.Fresh(absl::StrCat(block_name, "_rf"));
  std::string rf_buffer_name =
      out->name == block_name ? rf_name
                              : names.Fresh(absl::StrCat(out->name, "_rf"));
  std::vector<int64_t> rf_shape = out->shape;
  rf_shape.insert(rf_shape.begin() + factor_axis, loop->extent);
  BufferPtr rf = MakeBuffer(rf_buffer_name, out->dtype, rf_shape);

  Expr v_rf = Var(names.Fresh(absl::StrCat("v", loop_name)));
  VarMap loop_to_iter{{loop->var, v_rf}};
  std::vector<IterVar> new_reduce_vars;
  for (ForNode* l : others) {
    Expr v = Var(names.Fresh(absl::StrCat("v", l->var->name)));
    loop_to_iter[l->var] = v;
    new_reduce_vars.push_back({v, l->extent, IterType::kReduce});
  }
  VarMap reduce_value{{reduce_var.var, Substitute(binding, loop_to_iter)}};
  std::vector<IterVar> iter_vars;
  std::vector<Expr> iter_values;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    if (block->iter_vars[i].type != IterType::kSpatial) continue;
    iter_vars.push_back(block->iter_vars[i]);
    iter_values.push_back(block->iter_values[i]);
  }
  iter_vars.push_back({v_rf, loop->extent, IterType::kSpatial});
  iter_values.push_back(loop->var);
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    if (block->iter_vars[i].type != IterType::kReduce) continue;
    if (static_cast<int>(i) != bound) {
      iter_vars.push_back(block->iter_vars[i]);
      iter_values.push_back(block->iter_values[i]);
      continue;
    }
    for (size_t j = 0; j < others.size(); ++j) {
      iter_vars.push_back(new_reduce_vars[j]);
      iter_values.push_back(others[j]->var);
    }
  }
  std::vector<Expr> rf_indices = InsertAt(pattern.indices, factor_axis, v_rf);
  Expr rhs = Substitute(pattern.rhs, reduce_value);
  block->name = rf_name;
  block->iter_vars = std::move(iter_vars);
  block->iter_values = std::move(iter_values);
  block->predicate = Substitute(block->predicate, reduce_value);
  if (block->IsReduction()) {
    block->init =
        MakeStore(rf, rf_indices, Identity(pattern.combiner, out->dtype));
    block->body =
        MakeStore(rf, rf_indices, Combine(pattern, Load(rf, rf_indices), rhs));
  } else {
    // `loop` was the whole reduction: each partial result is one term (and
    // an init would never run in a block without reduction variables).
    block->init = nullptr;
    block->body = MakeStore(rf, rf_indices, rhs);
  }

  // 6. The final reduction of C_rf into C, after the rfactor nest.
  std::vector<IterVarSpec> specs;
  for (int64_t d = 0; d < rank; ++d) {
    specs.push_back({absl::StrCat("ax", d), out->shape[d], IterType::kSpatial});
  }
  specs.push_back({absl::StrCat("ax", rank), loop->extent, IterType::kReduce});
  StageNest final_nest = BuildStageNest(&names, block_name, specs);
  std::vector<Expr> out_indices(final_nest.iter_vars.begin(),
                                final_nest.iter_vars.begin() + rank);
  Expr r = final_nest.iter_vars.back();
  final_nest.block->init =
      MakeStore(out, out_indices, Identity(pattern.combiner, out->dtype));
  final_nest.block->body =
      MakeStore(out, out_indices,
                Combine(pattern, Load(out, out_indices),
                        Load(rf, InsertAt(out_indices, factor_axis, r))));

  program->root->alloc_buffers.push_back(rf);
  if (!InsertBeside(program, top, std::move(final_nest.nest), /*after=*/true)) {
    return absl::InternalError("rfactor: cannot place the final reduction");
  }
  SimplifyBindings(program);
  return rf_name;
}

}  // namespace lathe::primitive

namespace lathe {

const InstructionKind& RFactorInstruction() {
  // Input: the loop. Attribute: factor_axis. Output: the rfactor block.
  static const auto* const kind = new InstructionKind{
      "rfactor",
      {"factor_axis"},
      /*samples=*/false,
      [](const ReplayContext& c) -> absl::Status {
        LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(0));
        LATHE_ASSIGN_OR_RETURN(int64_t axis, c.IntAttr(0));
        LATHE_ASSIGN_OR_RETURN(BlockRV rf, c.sch->RFactor(loop, axis));
        return c.Outputs({rf.id});
      }};
  return *kind;
}

absl::StatusOr<BlockRV> ConcreteSchedule::RFactor(LoopRV loop,
                                                  int64_t factor_axis) {
  LATHE_ASSIGN_OR_RETURN(std::string l, LoopName(loop));
  std::string created;
  LATHE_RETURN_IF_ERROR(Apply([&](Program* p) -> absl::Status {
    LATHE_ASSIGN_OR_RETURN(created, primitive::RFactor(p, l, factor_axis));
    return absl::OkStatus();
  }));
  BlockRV rf = NewBlockRV(created);
  Record(RFactorInstruction(), {InputOf(loop)}, {factor_axis}, {rf.id});
  return rf;
}

}  // namespace lathe
