#include "compiler/schedule/primitive/split.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "compiler/arith/simplify.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/analysis/loop_ranges.h"
#include "compiler/schedule/instruction_kind.h"
#include "compiler/schedule/padding_limit.h"
#include "proto/trace_limits.h"

namespace lathe::primitive {

namespace {

// The most loops on one path from `stmt` down, `stmt` included when it is
// a loop. Nests are at most kMaxLoopNestDepth deep (Split keeps them so),
// which bounds the recursion.
int DeepestNestFrom(StmtNode* stmt) {
  int deepest = 0;
  for (StmtNode* child : ChildStmts(stmt)) {
    deepest = std::max(deepest, DeepestNestFrom(child));
  }
  return deepest + (stmt->kind == StmtKind::kFor ? 1 : 0);
}

// Loops above `stmt`, through every enclosing block.
int LoopsAboveThroughBlocks(const Program& program, const StmtNode* stmt) {
  int loops = 0;
  for (StmtNode* p = program.ParentOf(stmt); p != nullptr;
       p = program.ParentOf(p)) {
    if (p->kind == StmtKind::kFor) ++loops;
  }
  return loops;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> Split(
    Program* program, const std::string& loop_name,
    const std::vector<std::optional<int64_t>>& factors) {
  ForNode* loop = program->FindLoop(loop_name);
  if (loop == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("split: no loop named \"", loop_name, "\""));
  }
  auto fail = [&](const std::string& why) {
    return absl::FailedPreconditionError(absl::StrCat(
        "split: loop \"", loop_name, "\" (extent ", loop->extent, "): ", why));
  };
  if (factors.size() < 2) return fail("needs at least 2 factors");
  if (factors.size() > static_cast<size_t>(kMaxSplitFactors)) {
    return fail(absl::StrCat(factors.size(), " factors, more than ",
                             "kMaxSplitFactors (", kMaxSplitFactors, ")"));
  }
  const int depth = LoopsAboveThroughBlocks(*program, loop) +
                    DeepestNestFrom(loop) + static_cast<int>(factors.size()) -
                    1;
  if (depth > kMaxLoopNestDepth) {
    return fail(absl::StrCat("the nest would be ", depth,
                             " loops deep, more than kMaxLoopNestDepth (",
                             kMaxLoopNestDepth, ")"));
  }
  if (loop->for_kind == ForKind::kThreadBinding) {
    return fail("is bound to a thread axis");
  }
  // 1. Resolve the factors: at most one is inferred. Products saturate just
  // past the most a split may pad: no overflow.
  const int64_t max_padded = MaxPaddedExtent(loop->extent);
  int64_t known_product = 1;
  int inferred = -1;
  for (size_t i = 0; i < factors.size(); ++i) {
    if (!factors[i].has_value()) {
      if (inferred >= 0) return fail("more than one factor is inferred");
      inferred = static_cast<int>(i);
      continue;
    }
    if (*factors[i] < 1) {
      return fail(absl::StrCat("factor ", *factors[i], " is not positive"));
    }
    known_product =
        SaturatingProduct(known_product, *factors[i], max_padded + 1);
  }
  std::vector<int64_t> extents;
  for (const auto& f : factors) extents.push_back(f.value_or(0));
  if (inferred >= 0) {
    extents[inferred] =
        loop->extent / known_product + (loop->extent % known_product != 0);
  } else if (known_product < loop->extent) {
    return fail(absl::StrCat("factors [", absl::StrJoin(extents, ", "),
                             "] cover only ", known_product, " iterations"));
  }
  int64_t product = 1;
  for (int64_t e : extents)
    product = SaturatingProduct(product, e, max_padded + 1);
  if (product > max_padded) {
    return fail(absl::StrCat(
        "factors [", absl::StrJoin(extents, ", "), "] make more than ",
        max_padded,
        " iterations (a split may pad a loop to at most twice its extent, or "
        "its extent + 64)"));
  }

  // 2. New loop variables and the value of the old one. Candidate names
  // "<loop>_<i>" differ by i, so FreshName cannot hand out one twice.
  std::vector<std::string> names;
  std::vector<Expr> vars;
  Expr value;
  for (size_t i = 0; i < extents.size(); ++i) {
    names.push_back(program->FreshName(absl::StrCat(loop_name, "_", i)));
    vars.push_back(Var(names.back()));
    value = i == 0 ? vars[0] : value * extents[i] + vars[i];
  }

  // 3. Build the nest and rewrite the blocks below.
  StmtPtr body = std::move(loop->body);
  VarMap substitution{{loop->var, value}};
  Expr needs_guard = product > loop->extent ? (value < loop->extent) : Expr();
  // The old variable may be used anywhere below (bindings, predicates, and
  // after lowering-like rewrites, conditions and indices): replace it all.
  MutateAllExprs(body.get(),
                 [&](const Expr& e) { return Substitute(e, substitution); });
  if (needs_guard.defined()) {
    // Every block below runs once per iteration of the new nest, so every
    // block (not only those whose bindings use the loop) must skip the tail.
    VisitStmts(body.get(), [&](StmtNode* s) {
      if (auto* block = s->as<BlockNode>()) {
        block->predicate = And(block->predicate, needs_guard);
        return false;  // nested blocks run inside this one's guard
      }
      return true;
    });
  }
  for (size_t i = extents.size(); i-- > 0;) {
    // The new loops are serial: whether each may run in parallel or as
    // vectors is for the schedule to decide again.
    auto new_loop = MakeFor(vars[i], extents[i], std::move(body));
    if (i == 0) new_loop->annotations = loop->annotations;
    body = std::move(new_loop);
  }
  // Replace the old loop in its parent.
  StmtNode* parent = program->ParentOf(loop);
  LATHE_CHECK(parent != nullptr, "split: loop without parent");
  StmtNode* const nest = body.get();
  for (StmtPtr* slot : ChildSlots(parent)) {
    if (slot->get() == loop) {
      *slot = std::move(body);
      break;
    }
  }
  SimplifyBindings(program, nest);
  return names;
}

}  // namespace lathe::primitive

namespace lathe {

const InstructionKind& SplitInstruction() {
  // Inputs: the loop, then one factor per new loop (a value, a constant or
  // None for the inferred one). Outputs: the new loops.
  static const auto* const kind =
      new InstructionKind{"split",
                          {},
                          /*samples=*/false,
                          [](const ReplayContext& c) -> absl::Status {
                            LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(0));
                            std::vector<Factor> factors;
                            for (size_t i = 1; i < c.inst.inputs.size(); ++i) {
                              LATHE_ASSIGN_OR_RETURN(Factor f, c.FactorAt(i));
                              factors.push_back(f);
                            }
                            LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops,
                                                   c.sch->Split(loop, factors));
                            return c.Outputs(IdsOf(loops));
                          }};
  return *kind;
}

absl::StatusOr<std::vector<LoopRV>> ConcreteSchedule::Split(
    LoopRV loop, const std::vector<Factor>& factors) {
  LATHE_ASSIGN_OR_RETURN(std::string name, LoopName(loop));
  std::vector<std::optional<int64_t>> values;
  for (const Factor& f : factors) {
    if (std::holds_alternative<std::monostate>(f)) {
      values.push_back(std::nullopt);
    } else {
      LATHE_ASSIGN_OR_RETURN(int64_t v, FactorValue(f));
      values.push_back(v);
    }
  }
  std::vector<std::string> new_loops;
  LATHE_RETURN_IF_ERROR(Apply([&](Program* p) -> absl::Status {
    LATHE_ASSIGN_OR_RETURN(new_loops, primitive::Split(p, name, values));
    return absl::OkStatus();
  }));
  std::vector<LoopRV> result;
  for (const std::string& n : new_loops) result.push_back(NewLoopRV(n));
  std::vector<TraceInput> inputs = {InputOf(loop)};
  for (const Factor& f : factors) inputs.push_back(InputOf(f));
  Record(SplitInstruction(), std::move(inputs), {}, IdsOf(result));
  return result;
}

}  // namespace lathe
