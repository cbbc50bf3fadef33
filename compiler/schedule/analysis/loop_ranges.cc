#include "compiler/schedule/analysis/loop_ranges.h"

#include <functional>

#include "compiler/arith/simplify.h"

namespace lathe {

VarRanges LoopRangesAbove(const Program& program, const StmtNode* stmt) {
  VarRanges ranges;
  for (StmtNode* p = program.ParentOf(stmt); p != nullptr;
       p = program.ParentOf(p)) {
    if (auto* loop = p->as<ForNode>()) {
      ranges[loop->var.get()] = Interval::Extent(loop->extent);
    }
  }
  return ranges;
}

VarRanges AllLoopRanges(const Program& program) {
  VarRanges ranges;
  VisitStmts(static_cast<const StmtNode*>(program.root.get()),
             [&](const StmtNode* s) {
               if (const auto* loop = s->as<ForNode>()) {
                 ranges[loop->var.get()] = Interval::Extent(loop->extent);
               }
               return true;
             });
  return ranges;
}

void SimplifyBindings(Program* program) {
  SimplifyBindings(program, program->root.get());
}

void SimplifyBindings(Program* program, StmtNode* scope) {
  // Loop variables are unique, so the ranges of all loops at once are the
  // ranges of the loops around each block.
  VarRanges ranges = AllLoopRanges(*program);
  VisitStmts(scope, [&](StmtNode* s) {
    if (auto* block = s->as<BlockNode>()) {
      for (Expr& v : block->iter_values) v = Simplify(v, ranges);
      block->predicate = Simplify(block->predicate, ranges);
    }
    return true;
  });
}

}  // namespace lathe
