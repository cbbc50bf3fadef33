#include "compiler/schedule/analysis/stage_builder.h"

#include "absl/strings/str_cat.h"
#include "compiler/ir/expr_functor.h"

namespace lathe {

std::string NameAllocator::Fresh(const std::string& hint) {
  std::string name = program_.FreshName(hint);
  for (int i = 1; taken_.count(name); ++i) {
    name = program_.FreshName(absl::StrCat(hint, "_", i));
  }
  taken_.insert(name);
  return name;
}

StageNest BuildStageNest(NameAllocator* names, const std::string& block_name,
                         const std::vector<IterVarSpec>& specs) {
  StageNest result;
  auto block = std::make_unique<BlockNode>();
  block->name = block_name;
  std::vector<Expr> loop_vars;
  for (const IterVarSpec& spec : specs) {
    std::string loop_name = names->Fresh(spec.loop_hint);
    Expr loop_var = Var(loop_name);
    Expr iter_var = Var(names->Fresh(absl::StrCat("v", loop_name)));
    loop_vars.push_back(loop_var);
    block->iter_vars.push_back({iter_var, spec.extent, spec.type});
    block->iter_values.push_back(loop_var);
    result.iter_vars.push_back(iter_var);
  }
  result.block = block.get();
  StmtPtr nest = std::move(block);
  for (size_t i = specs.size(); i-- > 0;) {
    nest = MakeFor(loop_vars[i], specs[i].extent, std::move(nest));
  }
  result.nest = std::move(nest);
  return result;
}

StmtNode* TopLevelStmt(const Program& program, const StmtNode* stmt) {
  const StmtNode* root_body = program.root->body.get();
  const StmtNode* current = stmt;
  while (current != nullptr) {
    if (current == root_body) {
      // The body itself is the top-level statement unless it is a sequence.
      if (root_body->kind != StmtKind::kSeq)
        return const_cast<StmtNode*>(current);
      return nullptr;  // stmt is the root's sequence itself
    }
    StmtNode* parent = program.ParentOf(current);
    if (parent == root_body && root_body->kind == StmtKind::kSeq) {
      return const_cast<StmtNode*>(current);
    }
    current = parent;
  }
  return nullptr;
}

bool InsertBeside(Program* program, const StmtNode* anchor, StmtPtr stmt,
                  bool after) {
  StmtNode* parent = program->ParentOf(anchor);
  if (parent == nullptr) return false;
  if (auto* seq = parent->as<SeqNode>()) {
    for (size_t i = 0; i < seq->stmts.size(); ++i) {
      if (seq->stmts[i].get() == anchor) {
        seq->stmts.insert(
            seq->stmts.begin() + static_cast<long>(after ? i + 1 : i),
            std::move(stmt));
        return true;
      }
    }
    return false;
  }
  for (StmtPtr* slot : ChildSlots(parent)) {
    if (slot->get() != anchor) continue;
    std::vector<StmtPtr> pair;
    if (after) {
      pair.push_back(std::move(*slot));
      pair.push_back(std::move(stmt));
    } else {
      pair.push_back(std::move(stmt));
      pair.push_back(std::move(*slot));
    }
    *slot = MakeSeq(std::move(pair));
    return true;
  }
  return false;
}

std::vector<BlockNode*> BlocksIn(StmtNode* stmt) {
  std::vector<BlockNode*> blocks;
  VisitStmts(stmt, [&](StmtNode* s) {
    if (auto* b = s->as<BlockNode>(); b != nullptr && b->name != "root") {
      blocks.push_back(b);
    }
    return true;
  });
  return blocks;
}

void RedirectAccesses(
    BlockNode* block, const BufferPtr& from, const BufferPtr& to,
    const std::function<std::vector<Expr>(const std::vector<Expr>&)>&
        map_indices,
    bool stores) {
  auto rewrite = [&](const Expr& expr) {
    return MutateExpr(expr, [&](const Expr& e) {
      if (e.is(ExprKind::kLoad) && e->buffer == from) {
        return Load(to, map_indices(e->operands));
      }
      return e;
    });
  };
  for (StmtPtr* part : {&block->init, &block->body}) {
    if (*part == nullptr) continue;
    VisitStmts(part->get(), [&](StmtNode* s) {
      if (s->kind == StmtKind::kBlock)
        return false;  // nested blocks keep theirs
      MutateOwnExprs(s, rewrite);
      if (auto* store = s->as<StoreNode>();
          store != nullptr && stores && store->buffer == from) {
        store->buffer = to;
        store->indices = map_indices(store->indices);
      }
      return true;
    });
  }
}

absl::StatusOr<CacheChoice> ChooseCachedBuffer(
    const std::vector<BufferPtr>& buffers, int64_t index, const Layout& layout,
    const std::string& primitive, const std::string& block, const char* verb) {
  if (index < 0 || index >= static_cast<int64_t>(buffers.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        primitive, ": block \"", block, "\" ", verb, " ", buffers.size(),
        buffers.size() == 1 ? " buffer" : " buffers", ", index ", index,
        " is out of range"));
  }
  const BufferPtr& buffer = buffers[index];
  absl::StatusOr<std::vector<int64_t>> shape =
      LayoutShape(layout, buffer->shape);
  if (!shape.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(primitive, ": buffer \"", buffer->name, "\" of block \"",
                     block, "\": ", shape.status().message()));
  }
  return CacheChoice{buffer, *std::move(shape)};
}

}  // namespace lathe
