#include "compiler/ir/stmt.h"

#include "absl/strings/str_cat.h"
#include "base/check.h"

namespace lathe {

const char* ForKindName(ForKind kind) {
  switch (kind) {
    case ForKind::kSerial:
      return "serial";
    case ForKind::kParallel:
      return "parallel";
    case ForKind::kVectorized:
      return "vectorized";
    case ForKind::kUnrolled:
      return "unrolled";
    case ForKind::kThreadBinding:
      return "thread_binding";
  }
  return "?";
}

const char* IterTypeName(IterType type) {
  return type == IterType::kSpatial ? "spatial" : "reduce";
}

std::string AnnotationValueToString(const AnnotationValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return absl::StrCat(*i);
  return absl::StrCat("\"", std::get<std::string>(value), "\"");
}

bool BlockNode::IsReduction() const {
  for (const IterVar& iv : iter_vars) {
    if (iv.type == IterType::kReduce) return true;
  }
  return false;
}

StmtPtr MakeStore(BufferPtr buffer, std::vector<Expr> indices, Expr value) {
  auto store = std::make_unique<StoreNode>();
  store->buffer = std::move(buffer);
  store->indices = std::move(indices);
  store->value = std::move(value);
  return store;
}

std::unique_ptr<ForNode> MakeFor(Expr var, int64_t extent, StmtPtr body,
                                 ForKind kind) {
  auto loop = std::make_unique<ForNode>();
  loop->var = std::move(var);
  loop->extent = extent;
  loop->for_kind = kind;
  loop->body = std::move(body);
  return loop;
}

StmtPtr MakeSeq(std::vector<StmtPtr> stmts) {
  if (stmts.size() == 1) return std::move(stmts[0]);
  auto seq = std::make_unique<SeqNode>();
  seq->stmts = std::move(stmts);
  return seq;
}

StmtPtr MakeIf(Expr cond, StmtPtr then_case, StmtPtr else_case) {
  auto node = std::make_unique<IfNode>();
  node->cond = std::move(cond);
  node->then_case = std::move(then_case);
  node->else_case = std::move(else_case);
  return node;
}

static StmtPtr CloneOrNull(const StmtPtr& stmt) {
  return stmt ? CloneStmt(*stmt) : nullptr;
}

std::unique_ptr<BlockNode> CloneBlock(const BlockNode& b) {
  auto copy = std::make_unique<BlockNode>();
  copy->name = b.name;
  copy->iter_vars = b.iter_vars;
  copy->iter_values = b.iter_values;
  copy->predicate = b.predicate;
  copy->alloc_buffers = b.alloc_buffers;
  copy->init = CloneOrNull(b.init);
  copy->body = CloneOrNull(b.body);
  copy->annotations = b.annotations;
  return copy;
}

StmtPtr CloneStmt(const StmtNode& stmt) {
  switch (stmt.kind) {
    case StmtKind::kFor: {
      const auto& f = *stmt.as<ForNode>();
      auto copy = MakeFor(f.var, f.extent, CloneOrNull(f.body), f.for_kind);
      copy->thread_tag = f.thread_tag;
      copy->annotations = f.annotations;
      return copy;
    }
    case StmtKind::kSeq: {
      auto copy = std::make_unique<SeqNode>();
      for (const auto& s : stmt.as<SeqNode>()->stmts) {
        copy->stmts.push_back(CloneStmt(*s));
      }
      return copy;
    }
    case StmtKind::kBlock:
      return CloneBlock(*stmt.as<BlockNode>());
    case StmtKind::kStore: {
      const auto& s = *stmt.as<StoreNode>();
      return MakeStore(s.buffer, s.indices, s.value);
    }
    case StmtKind::kIf: {
      const auto& i = *stmt.as<IfNode>();
      return MakeIf(i.cond, CloneOrNull(i.then_case), CloneOrNull(i.else_case));
    }
  }
  LATHE_CHECK(false, "unknown statement kind");
  return nullptr;
}

std::vector<StmtPtr*> ChildSlots(StmtNode* stmt) {
  std::vector<StmtPtr*> slots;
  ForEachChildSlot(stmt, [&](StmtPtr& s) { slots.push_back(&s); });
  return slots;
}

std::vector<StmtNode*> ChildStmts(StmtNode* stmt) {
  std::vector<StmtNode*> children;
  ForEachChildSlot(stmt, [&](StmtPtr& s) { children.push_back(s.get()); });
  return children;
}

void VisitStmts(StmtNode* root, const std::function<bool(StmtNode*)>& fn) {
  if (root == nullptr || !fn(root)) return;
  ForEachChildSlot(root, [&](StmtPtr& child) { VisitStmts(child.get(), fn); });
}

void VisitStmts(const StmtNode* root,
                const std::function<bool(const StmtNode*)>& fn) {
  VisitStmts(const_cast<StmtNode*>(root), [&](StmtNode* s) { return fn(s); });
}

void VisitOwnExprs(const StmtNode& stmt,
                   const std::function<void(const Expr&)>& fn) {
  switch (stmt.kind) {
    case StmtKind::kFor:
    case StmtKind::kSeq:
      break;  // a loop variable is a definition, not a use
    case StmtKind::kBlock: {
      const auto& b = *stmt.as<BlockNode>();
      for (const Expr& v : b.iter_values) fn(v);
      fn(b.predicate);
      break;
    }
    case StmtKind::kStore: {
      const auto& s = *stmt.as<StoreNode>();
      for (const Expr& i : s.indices) fn(i);
      fn(s.value);
      break;
    }
    case StmtKind::kIf:
      fn(stmt.as<IfNode>()->cond);
      break;
  }
}

void MutateOwnExprs(StmtNode* stmt,
                    const std::function<Expr(const Expr&)>& fn) {
  switch (stmt->kind) {
    case StmtKind::kFor:
    case StmtKind::kSeq:
      break;  // a loop variable is a definition, not a use
    case StmtKind::kBlock: {
      auto& b = *stmt->as<BlockNode>();
      for (Expr& v : b.iter_values) v = fn(v);
      b.predicate = fn(b.predicate);
      break;
    }
    case StmtKind::kStore: {
      auto& s = *stmt->as<StoreNode>();
      for (Expr& i : s.indices) i = fn(i);
      s.value = fn(s.value);
      break;
    }
    case StmtKind::kIf:
      stmt->as<IfNode>()->cond = fn(stmt->as<IfNode>()->cond);
      break;
  }
}

void MutateAllExprs(StmtNode* root,
                    const std::function<Expr(const Expr&)>& fn) {
  VisitStmts(root, [&](StmtNode* s) {
    MutateOwnExprs(s, fn);
    return true;
  });
}

std::map<const StmtNode*, StmtNode*> ParentMap(StmtNode* root) {
  std::map<const StmtNode*, StmtNode*> parents;
  VisitStmts(root, [&](StmtNode* s) {
    for (StmtNode* child : ChildStmts(s)) parents[child] = s;
    return true;
  });
  return parents;
}

}  // namespace lathe
