#include "compiler/ir/program.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "compiler/ir/expr_functor.h"

namespace lathe {

Program::Program(const Program& other)
    : name(other.name),
      inputs(other.inputs),
      outputs(other.outputs),
      layout_free_inputs(other.layout_free_inputs),
      root(other.root ? CloneBlock(*other.root) : nullptr) {}

Program& Program::operator=(const Program& other) {
  if (this != &other) *this = Program(other);
  return *this;
}

std::vector<BufferPtr> Program::Params() const {
  std::vector<BufferPtr> params = inputs;
  params.insert(params.end(), outputs.begin(), outputs.end());
  return params;
}

bool Program::IsInput(const Buffer* buffer) const {
  for (const BufferPtr& b : inputs) {
    if (b.get() == buffer) return true;
  }
  return false;
}

bool Program::IsOutput(const Buffer* buffer) const {
  for (const BufferPtr& b : outputs) {
    if (b.get() == buffer) return true;
  }
  return false;
}

bool Program::IsLayoutFreeInput(const Buffer* buffer) const {
  for (const BufferPtr& b : layout_free_inputs) {
    if (b.get() == buffer) return true;
  }
  return false;
}

BlockNode* Program::FindBlock(const std::string& block_name) const {
  BlockNode* found = nullptr;
  VisitStmts(root.get(), [&](StmtNode* s) {
    if (found) return false;
    if (auto* b = s->as<BlockNode>(); b && b->name == block_name) found = b;
    return true;
  });
  return found;
}

ForNode* Program::FindLoop(const std::string& loop_name) const {
  ForNode* found = nullptr;
  VisitStmts(root.get(), [&](StmtNode* s) {
    if (found) return false;
    if (auto* f = s->as<ForNode>(); f && f->var->name == loop_name) found = f;
    return true;
  });
  return found;
}

std::vector<BlockNode*> Program::Blocks() const {
  std::vector<BlockNode*> blocks;
  VisitStmts(root.get(), [&](StmtNode* s) {
    if (auto* b = s->as<BlockNode>(); b && b != root.get()) blocks.push_back(b);
    return true;
  });
  return blocks;
}

namespace {

// The statements from `node` down to `target`'s parent, outermost first,
// appended to `path`; false (and `path` as it was) when `target` is not
// below `node`. Trees are small (tens of nodes): one walk is cheaper to
// keep correct than parent pointers every primitive must maintain.
bool PathTo(StmtNode* node, const StmtNode* target,
            std::vector<StmtNode*>* path) {
  path->push_back(node);
  bool found = false;
  ForEachChildSlot(node, [&](StmtPtr& child) {
    found = found || child.get() == target || PathTo(child.get(), target, path);
  });
  if (!found) path->pop_back();
  return found;
}

// Whether `name` is `hint` or `hint` "_" followed by anything: the only
// names FreshName's candidates can collide with.
bool MayCollide(const std::string& name, const std::string& hint) {
  return name.size() >= hint.size() &&
         name.compare(0, hint.size(), hint) == 0 &&
         (name.size() == hint.size() || name[hint.size()] == '_');
}

}  // namespace

StmtNode* Program::ParentOf(const StmtNode* stmt) const {
  std::vector<StmtNode*> path;
  if (root == nullptr || !PathTo(root.get(), stmt, &path)) return nullptr;
  return path.back();
}

std::vector<ForNode*> Program::LoopsAbove(const StmtNode* stmt) const {
  std::vector<StmtNode*> path;
  std::vector<ForNode*> loops;
  if (root == nullptr || !PathTo(root.get(), stmt, &path)) return loops;
  for (auto p = path.rbegin(); p != path.rend(); ++p) {
    if ((*p)->kind == StmtKind::kBlock) break;
    if (auto* f = (*p)->as<ForNode>()) loops.insert(loops.begin(), f);
  }
  return loops;
}

BlockNode* Program::EnclosingBlock(const StmtNode* stmt) const {
  std::vector<StmtNode*> path;
  if (root == nullptr || !PathTo(root.get(), stmt, &path)) return nullptr;
  for (auto p = path.rbegin(); p != path.rend(); ++p) {
    if (auto* b = (*p)->as<BlockNode>()) return b;
  }
  return nullptr;
}

std::string Program::FreshName(const std::string& hint) const {
  std::set<std::string> used;
  auto use = [&](const std::string& name) {
    if (MayCollide(name, hint)) used.insert(name);
  };
  for (const BufferPtr& b : Params()) use(b->name);
  VisitStmts(root.get(), [&](StmtNode* s) {
    if (auto* f = s->as<ForNode>()) use(f->var->name);
    if (auto* b = s->as<BlockNode>()) {
      use(b->name);
      for (const IterVar& iv : b->iter_vars) use(iv.var->name);
      for (const BufferPtr& buf : b->alloc_buffers) use(buf->name);
    }
    return true;
  });
  if (!used.count(hint)) return hint;
  for (int i = 1;; ++i) {
    std::string candidate = absl::StrCat(hint, "_", i);
    if (!used.count(candidate)) return candidate;
  }
}

namespace {

void CollectLoads(const Expr& expr, std::vector<BufferAccess>* reads) {
  VisitExpr(expr, [&](const Expr& e) {
    if (e.is(ExprKind::kLoad)) reads->push_back({e->buffer, e->operands});
  });
}

void CollectAccesses(const StmtNode* stmt, BlockAccesses* out) {
  VisitStmts(stmt, [&](const StmtNode* s) {
    if (s != stmt && s->kind == StmtKind::kBlock) return false;
    if (const auto* store = s->as<StoreNode>()) {
      for (const Expr& i : store->indices) CollectLoads(i, &out->reads);
      CollectLoads(store->value, &out->reads);
      out->writes.push_back({store->buffer, store->indices});
    } else if (s->kind != StmtKind::kBlock) {
      VisitOwnExprs(*s, [&](const Expr& e) { CollectLoads(e, &out->reads); });
    }
    return true;
  });
}

}  // namespace

BlockAccesses AccessesOf(const BlockNode& block) {
  BlockAccesses accesses;
  if (block.init) CollectAccesses(block.init.get(), &accesses);
  if (block.body) CollectAccesses(block.body.get(), &accesses);
  return accesses;
}

static std::vector<BufferPtr> Unique(const std::vector<BufferPtr>& buffers) {
  std::vector<BufferPtr> out;
  std::set<const Buffer*> seen;
  for (const BufferPtr& b : buffers) {
    if (seen.insert(b.get()).second) out.push_back(b);
  }
  return out;
}

std::vector<BufferPtr> BuffersWritten(const StmtNode& stmt) {
  std::vector<BufferPtr> buffers;
  VisitStmts(&stmt, [&](const StmtNode* s) {
    if (const auto* store = s->as<StoreNode>())
      buffers.push_back(store->buffer);
    return true;
  });
  return Unique(buffers);
}

std::vector<BufferPtr> BuffersRead(const StmtNode& stmt) {
  std::vector<BufferPtr> buffers;
  VisitStmts(&stmt, [&](const StmtNode* s) {
    VisitOwnExprs(*s, [&](const Expr& e) {
      VisitExpr(e, [&](const Expr& x) {
        if (x.is(ExprKind::kLoad)) buffers.push_back(x->buffer);
      });
    });
    return true;
  });
  return Unique(buffers);
}

}  // namespace lathe
