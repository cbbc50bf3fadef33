#include "compiler/schedule/analysis/loop_accesses.h"

#include <functional>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/expr_functor.h"

namespace lathe {
namespace {

// Whether `e` loads `buffer`.
bool LoadsBuffer(const Expr& e, const Buffer* buffer) {
  bool found = false;
  if (e.defined()) {
    VisitExpr(e, [&](const Expr& x) {
      found |= x.is(ExprKind::kLoad) && x->buffer.get() == buffer;
    });
  }
  return found;
}

class AccessCollector {
 public:
  explicit AccessCollector(const BlockNode* outer_block)
      : outer_block_(outer_block) {}

  void Run(const Program& program, const ForNode& scope) {
    private_ = RootBuffersPrivateToIterations(program, scope);
    // Buffers allocated below the scope are fresh per instance of their block.
    VisitStmts(static_cast<const StmtNode*>(&scope), [&](const StmtNode* s) {
      if (const auto* b = s->as<BlockNode>()) {
        for (const BufferPtr& buf : b->alloc_buffers)
          private_.insert(buf.get());
      }
      return true;
    });
    Walk(scope, VarMap{}, outer_block_);
  }

  std::vector<LoopAccess> accesses;
  std::vector<ExpandedBlock> blocks;

 private:
  void AddReads(const Expr& expr, const VarMap& subst, const BlockNode* block) {
    if (!expr.defined()) return;
    VisitExpr(Substitute(expr, subst), [&](const Expr& e) {
      if (e.is(ExprKind::kLoad) && !private_.count(e->buffer.get())) {
        accesses.push_back({block, e->buffer, e->operands, /*is_write=*/false});
      }
    });
  }

  void Walk(const StmtNode& s, const VarMap& subst, const BlockNode* block) {
    switch (s.kind) {
      case StmtKind::kFor:
        Walk(*s.as<ForNode>()->body, subst, block);
        return;
      case StmtKind::kSeq:
        for (const StmtPtr& c : s.as<SeqNode>()->stmts) Walk(*c, subst, block);
        return;
      case StmtKind::kIf: {
        const auto& n = *s.as<IfNode>();
        AddReads(n.cond, subst, block);
        Walk(*n.then_case, subst, block);
        if (n.else_case) Walk(*n.else_case, subst, block);
        return;
      }
      case StmtKind::kStore: {
        const auto& n = *s.as<StoreNode>();
        for (const Expr& i : n.indices) AddReads(i, subst, block);
        AddReads(n.value, subst, block);
        if (!private_.count(n.buffer.get())) {
          std::vector<Expr> indices;
          for (const Expr& i : n.indices)
            indices.push_back(Substitute(i, subst));
          accesses.push_back(
              {block, n.buffer, std::move(indices), /*is_write=*/true});
        }
        return;
      }
      case StmtKind::kBlock: {
        const auto& b = *s.as<BlockNode>();
        VarMap inner = subst;
        ExpandedBlock expanded{&b, {}};
        for (size_t i = 0; i < b.iter_vars.size() && i < b.iter_values.size();
             ++i) {
          AddReads(b.iter_values[i], subst, block);
          expanded.bindings.push_back(Substitute(b.iter_values[i], subst));
          inner[b.iter_vars[i].var] = expanded.bindings.back();
        }
        blocks.push_back(std::move(expanded));
        AddReads(b.predicate, inner, &b);
        if (b.init) Walk(*b.init, inner, &b);
        if (b.body) Walk(*b.body, inner, &b);
        return;
      }
    }
  }

  const BlockNode* outer_block_;
  std::set<const Buffer*> private_;
};
// The statements enclosing `target` below `node`, outermost first; false
// when `target` is not below `node`. One walk of the tree, where
// Program::ParentOf walks it once per level.
bool PathTo(const StmtNode* node, const StmtNode* target,
            std::vector<const StmtNode*>* path) {
  if (node == target) return true;
  path->push_back(node);
  for (const StmtNode* child : ChildStmts(const_cast<StmtNode*>(node))) {
    if (PathTo(child, target, path)) return true;
  }
  path->pop_back();
  return false;
}

// Program::EnclosingBlock in one walk.
const BlockNode* EnclosingBlockOf(const Program& program,
                                  const StmtNode* stmt) {
  std::vector<const StmtNode*> path = AncestorsOf(program, stmt);
  for (auto p = path.rbegin(); p != path.rend(); ++p) {
    if (const auto* b = (*p)->as<BlockNode>()) return b;
  }
  return nullptr;
}

}  // namespace

std::vector<const StmtNode*> AncestorsOf(const Program& program,
                                         const StmtNode* stmt) {
  std::vector<const StmtNode*> path;
  if (!PathTo(program.root.get(), stmt, &path)) path.clear();
  return path;
}

LoopAccessesAndBlocks CollectLoopAccessesAndBlocks(const Program& program,
                                                   const ForNode& scope) {
  AccessCollector collector(EnclosingBlockOf(program, &scope));
  collector.Run(program, scope);
  return {std::move(collector.accesses), std::move(collector.blocks)};
}

std::vector<LoopAccess> CollectLoopAccesses(const Program& program,
                                            const ForNode& scope) {
  return CollectLoopAccessesAndBlocks(program, scope).accesses;
}

std::set<const Buffer*> RootBuffersPrivateToIterations(const Program& program,
                                                       const ForNode& scope) {
  struct Use {
    bool outside = false;  // an access outside the scope
    bool update = false;   // a store whose value reads the buffer
    bool inside = false;
  };
  std::map<const Buffer*, Use> uses;
  for (const BufferPtr& b : program.root->alloc_buffers) {
    if (b->scope != BufferScope::kGlobal) uses[b.get()];
  }
  if (uses.empty()) return {};
  std::function<void(const StmtNode&, bool)> walk = [&](const StmtNode& s,
                                                        bool inside) {
    inside |= &s == static_cast<const StmtNode*>(&scope);
    VisitOwnExprs(s, [&](const Expr& e) {
      VisitExpr(e, [&](const Expr& x) {
        if (!x.is(ExprKind::kLoad)) return;
        auto it = uses.find(x->buffer.get());
        if (it == uses.end()) return;
        (inside ? it->second.inside : it->second.outside) = true;
      });
    });
    if (const auto* store = s.as<StoreNode>()) {
      auto it = uses.find(store->buffer.get());
      if (it != uses.end()) {
        (inside ? it->second.inside : it->second.outside) = true;
        it->second.update |= LoadsBuffer(store->value, store->buffer.get());
      }
    }
    for (const StmtNode* c : ChildStmts(const_cast<StmtNode*>(&s)))
      walk(*c, inside);
  };
  walk(*program.root, false);
  std::set<const Buffer*> result;
  for (const auto& [buffer, use] : uses) {
    if (use.inside && !use.outside && !use.update) result.insert(buffer);
  }
  return result;
}

std::vector<Expr> LoopVarsIn(const ForNode& scope) {
  std::vector<Expr> vars;
  VisitStmts(static_cast<const StmtNode*>(&scope), [&](const StmtNode* s) {
    if (const auto* f = s->as<ForNode>()) vars.push_back(f->var);
    return true;
  });
  return vars;
}

std::string AccessText(const LoopAccess& a) {
  std::vector<std::string> parts;
  for (const Expr& i : a.indices) parts.push_back(i.ToString());
  return absl::StrCat(a.buffer->name, "[", absl::StrJoin(parts, ", "), "]");
}

std::string BlockText(const LoopAccess& a) {
  return a.block == nullptr ? std::string("the loop body")
                            : absl::StrCat("block \"", a.block->name, "\"");
}

}  // namespace lathe
