#include "compiler/schedule/primitive/reorder.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/schedule/analysis/data_parallel.h"
#include "compiler/schedule/instruction_kind.h"

namespace lathe::primitive {

namespace {

// What a loop's node says about the loop itself (its body stays in place).
struct LoopHeader {
  Expr var;
  int64_t extent;
  ForKind for_kind;
  std::string thread_tag;
  Annotations annotations;
};

LoopHeader TakeHeader(const ForNode& loop) {
  return {loop.var, loop.extent, loop.for_kind, loop.thread_tag,
          loop.annotations};
}

void PutHeader(const LoopHeader& h, ForNode* loop) {
  loop->var = h.var;
  loop->extent = h.extent;
  loop->for_kind = h.for_kind;
  loop->thread_tag = h.thread_tag;
  loop->annotations = h.annotations;
}

}  // namespace

absl::Status Reorder(Program* program, const std::vector<std::string>& order) {
  if (order.empty())
    return absl::InvalidArgumentError("reorder: no loops given");
  // 1. Resolve the loops; each with its chain of ancestors (up to the root).
  std::vector<ForNode*> loops;
  std::set<std::string> seen;
  std::map<const ForNode*, int> depth;
  for (const std::string& name : order) {
    if (!seen.insert(name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("reorder: loop \"", name, "\" is given twice"));
    }
    ForNode* loop = program->FindLoop(name);
    if (loop == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("reorder: no loop named \"", name, "\""));
    }
    int d = 0;
    for (StmtNode* p = program->ParentOf(loop); p != nullptr;
         p = program->ParentOf(p)) {
      ++d;
    }
    depth[loop] = d;
    loops.push_back(loop);
  }
  // 2. Sorted outermost first, each must be an ancestor of the next.
  std::vector<ForNode*> by_depth = loops;
  std::stable_sort(
      by_depth.begin(), by_depth.end(),
      [&](const ForNode* a, const ForNode* b) { return depth[a] < depth[b]; });
  auto is_ancestor = [&](const StmtNode* outer, const StmtNode* inner) {
    for (StmtNode* p = program->ParentOf(inner); p != nullptr;
         p = program->ParentOf(p)) {
      if (p == outer) return true;
    }
    return false;
  };
  for (size_t i = 0; i + 1 < by_depth.size(); ++i) {
    if (!is_ancestor(by_depth[i], by_depth[i + 1])) {
      return absl::FailedPreconditionError(
          absl::StrCat("reorder: loops \"", by_depth[i]->var->name, "\" and \"",
                       by_depth[i + 1]->var->name, "\" are not in one nest"));
    }
  }
  // 3. The span from the outermost to the innermost given loop is a perfect
  // nest: each loop's body is exactly the next loop.
  std::vector<ForNode*> nest;
  for (ForNode* l = by_depth.front();; l = l->body->as<ForNode>()) {
    nest.push_back(l);
    if (l == by_depth.back()) break;
    if (l->body->kind != StmtKind::kFor) {
      const StmtNode* body = l->body.get();
      std::string what =
          body->kind == StmtKind::kBlock
              ? absl::StrCat("block \"", body->as<BlockNode>()->name, "\"")
          : body->kind == StmtKind::kSeq
              ? std::string("a sequence of statements")
              : std::string("a statement");
      return absl::FailedPreconditionError(
          absl::StrCat("reorder: loops \"", by_depth.front()->var->name,
                       "\" .. \"", by_depth.back()->var->name,
                       "\" are not a perfect nest: the body of loop \"",
                       l->var->name, "\" is ", what));
    }
  }
  // 4. The span after the reorder: given loops take the given order at the
  // positions they occupy, other loops stay.
  std::vector<const ForNode*> span(nest.begin(), nest.end());
  std::set<const ForNode*> given(loops.begin(), loops.end());
  std::vector<const ForNode*> new_span;
  size_t next = 0;
  for (const ForNode* l : span)
    new_span.push_back(given.count(l) ? loops[next++] : l);
  if (new_span == span) return absl::OkStatus();
  // A vectorized loop has no loop below, so it can only be the innermost of
  // the span, and must stay there.
  for (size_t i = 0; i + 1 < new_span.size(); ++i) {
    if (new_span[i]->for_kind == ForKind::kVectorized) {
      return absl::FailedPreconditionError(
          absl::StrCat("reorder: loop \"", new_span[i]->var->name,
                       "\" is vectorized and would no longer be innermost"));
    }
  }
  LATHE_RETURN_IF_ERROR(CheckReorderKeepsDependences(*program, span, new_span));

  // 5. Move the headers (variable, extent, kind, annotations) into place.
  std::vector<LoopHeader> headers;
  for (const ForNode* l : new_span) headers.push_back(TakeHeader(*l));
  for (size_t i = 0; i < span.size(); ++i) {
    PutHeader(headers[i], nest[i]);
  }
  // 6. Loops whose iterations run concurrently must still be data-parallel
  // where they now are (their inner loops changed).
  for (const ForNode* l : nest) {
    const char* what = l->for_kind == ForKind::kParallel        ? "parallel"
                       : l->for_kind == ForKind::kVectorized    ? "vectorize"
                       : l->for_kind == ForKind::kThreadBinding ? "bind"
                                                                : nullptr;
    if (what == nullptr) continue;
    absl::Status s = CheckDataParallel(*program, *l, what);
    if (!s.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "reorder: loop \"", l->var->name,
          "\" would stop being data-parallel (", s.message(), ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace lathe::primitive

namespace lathe {

const InstructionKind& ReorderInstruction() {
  // Inputs: the loops in their new order.
  static const auto* const kind = new InstructionKind{
      "reorder",
      {},
      /*samples=*/false,
      [](const ReplayContext& c) -> absl::Status {
        LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, c.AllLoops());
        return c.sch->Reorder(loops);
      }};
  return *kind;
}

absl::Status ConcreteSchedule::Reorder(const std::vector<LoopRV>& order) {
  std::vector<std::string> names;
  for (LoopRV l : order) {
    LATHE_ASSIGN_OR_RETURN(std::string n, LoopName(l));
    names.push_back(n);
  }
  LATHE_RETURN_IF_ERROR(
      Apply([&](Program* p) { return primitive::Reorder(p, names); }));
  Record(ReorderInstruction(), InputsOf(order), {}, {});
  return absl::OkStatus();
}

}  // namespace lathe
