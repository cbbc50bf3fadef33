#include "compiler/schedule/primitive/fuse.h"

#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/analysis/loop_ranges.h"
#include "compiler/schedule/instruction_kind.h"

namespace lathe::primitive {

absl::StatusOr<std::string> Fuse(Program* program,
                                 const std::vector<std::string>& loop_names) {
  std::string listed =
      absl::StrCat("\"", absl::StrJoin(loop_names, "\", \""), "\"");
  if (loop_names.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fuse: needs at least 2 loops, got ", loop_names.size(),
        loop_names.empty() ? "" : absl::StrCat(" (", listed, ")")));
  }
  // 1. Resolve the loops and check that each is the whole body of the previous.
  std::vector<ForNode*> loops;
  std::set<std::string> seen;
  for (const std::string& name : loop_names) {
    if (!seen.insert(name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("fuse: loop \"", name, "\" is given twice in ", listed));
    }
    ForNode* loop = program->FindLoop(name);
    if (loop == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("fuse: no loop named \"", name, "\""));
    }
    if (loop->for_kind == ForKind::kThreadBinding) {
      return absl::FailedPreconditionError(
          absl::StrCat("fuse: loop \"", name, "\" is bound to thread axis ",
                       loop->thread_tag));
    }
    if (!loops.empty() && loops.back()->body.get() != loop) {
      const StmtNode* body = loops.back()->body.get();
      std::string what =
          body->kind == StmtKind::kFor
              ? absl::StrCat("loop \"", body->as<ForNode>()->var->name, "\"")
          : body->kind == StmtKind::kBlock
              ? absl::StrCat("block \"", body->as<BlockNode>()->name, "\"")
          : body->kind == StmtKind::kSeq
              ? std::string("a sequence of statements")
              : std::string("a statement");
      return absl::FailedPreconditionError(absl::StrCat(
          "fuse: loop \"", name, "\" is not the body of loop \"",
          loops.back()->var->name, "\" (its body is ", what,
          "); fused loops must be directly nested, outermost first"));
    }
    loops.push_back(loop);
  }

  // 2. The fused loop and the value of each old variable:
  // l_i = (fused // stride_i) % extent_i, the outermost without %.
  std::string hint = absl::StrCat(absl::StrJoin(loop_names, "_"), "_fused");
  std::string fused_name = program->FreshName(hint);
  Expr fused = Var(fused_name);
  int64_t extent = 1;
  for (const ForNode* l : loops) extent *= l->extent;
  VarMap substitution;
  int64_t stride = 1;
  for (size_t i = loops.size(); i-- > 0;) {
    Expr value = stride == 1 ? fused : FloorDiv(fused, IntImm(stride));
    if (i > 0) value = FloorMod(value, IntImm(loops[i]->extent));
    substitution[loops[i]->var] = value;
    stride *= loops[i]->extent;
  }

  // 3. Rewrite every use below (bindings, predicates and anything else that
  // names the old variables) and put the new loop in place of the outermost.
  // The fused loop is serial: whether it may run in parallel is for the
  // schedule to decide again.
  StmtPtr body = std::move(loops.back()->body);
  MutateAllExprs(body.get(),
                 [&](const Expr& e) { return Substitute(e, substitution); });
  auto new_loop = MakeFor(fused, extent, std::move(body));
  new_loop->annotations = loops.front()->annotations;
  StmtNode* const fused_loop = new_loop.get();
  StmtNode* parent = program->ParentOf(loops.front());
  LATHE_CHECK(parent != nullptr, "fuse: loop without parent");
  for (StmtPtr* slot : ChildSlots(parent)) {
    if (slot->get() == loops.front()) {
      *slot = std::move(new_loop);
      break;
    }
  }
  SimplifyBindings(program, fused_loop);
  return fused_name;
}

}  // namespace lathe::primitive

namespace lathe {

const InstructionKind& FuseInstruction() {
  // Inputs: the loops, outermost first. Output: the fused loop.
  static const auto* const kind = new InstructionKind{
      "fuse",
      {},
      /*samples=*/false,
      [](const ReplayContext& c) -> absl::Status {
        LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, c.AllLoops());
        LATHE_ASSIGN_OR_RETURN(LoopRV fused, c.sch->Fuse(loops));
        return c.Outputs({fused.id});
      }};
  return *kind;
}

absl::StatusOr<LoopRV> ConcreteSchedule::Fuse(
    const std::vector<LoopRV>& loops) {
  std::vector<std::string> names;
  for (LoopRV l : loops) {
    LATHE_ASSIGN_OR_RETURN(std::string n, LoopName(l));
    names.push_back(n);
  }
  std::string fused;
  LATHE_RETURN_IF_ERROR(Apply([&](Program* p) -> absl::Status {
    LATHE_ASSIGN_OR_RETURN(fused, primitive::Fuse(p, names));
    return absl::OkStatus();
  }));
  LoopRV result = NewLoopRV(fused);
  Record(FuseInstruction(), InputsOf(loops), {}, {result.id});
  return result;
}

}  // namespace lathe
