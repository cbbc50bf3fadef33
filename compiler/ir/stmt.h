// Statements of the loop IR: loops, blocks, stores, conditionals, sequences.
//
// Semantics:
// - A For loop runs its body for var = 0, 1, ..., extent - 1 in that order
//   (serial, unrolled) or in any order (parallel, vectorized, thread-bound:
//   the schedule only marks loops whose iterations are independent). Extents
//   are constants: shapes are concrete, and a region that does not divide
//   evenly is covered by a larger loop and a block predicate.
// - A Block is one instance of a computation. Its iteration variables range
//   over [0, extent) and are bound to expressions of the enclosing loop
//   variables (iter_values). An instance whose predicate is false does
//   nothing. For a reduction block (one with a reduce iteration variable),
//   init runs before the body when every reduce variable is 0: the first
//   instance, in execution order, that touches an output element.
//   A block's iteration variables are visible only inside that block.
//   Buffers in alloc_buffers live for the duration of the block.
//   Reads and writes are not stored: AccessRegions derives them from the body
//   (stored copies would go stale under every primitive).
// - The root of a program is a block named "root" with no iteration
//   variables; it allocates the intermediates between stages.
// - Store writes one element; If runs then_case or else_case; Seq runs its
//   statements in order.
//
// Statements form a mutable tree owned through unique_ptr. Schedules mutate a
// program in place; copy a Program (deep clone) to keep the original.
// Tests: tests/compiler/ir/program_test.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "compiler/ir/buffer.h"
#include "compiler/ir/expr.h"

namespace lathe {

#define LATHE_FOR_EACH_STMT_KIND(X) \
  X(For)                            \
  X(Seq)                            \
  X(Block)                          \
  X(Store)                          \
  X(If)

enum class StmtKind : uint8_t {
#define LATHE_STMT_KIND_ENUM(name) k##name,
  LATHE_FOR_EACH_STMT_KIND(LATHE_STMT_KIND_ENUM)
#undef LATHE_STMT_KIND_ENUM
};

enum class ForKind : uint8_t {
  kSerial,
  kParallel,
  kVectorized,
  kUnrolled,
  kThreadBinding,
};
const char* ForKindName(ForKind kind);

enum class IterType : uint8_t { kSpatial, kReduce };
const char* IterTypeName(IterType type);

using AnnotationValue = std::variant<int64_t, std::string>;
using Annotations = std::map<std::string, AnnotationValue>;
std::string AnnotationValueToString(const AnnotationValue& value);

struct StmtNode {
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
  StmtNode(const StmtNode&) = delete;
  StmtNode& operator=(const StmtNode&) = delete;

  template <typename T>
  T* as() {
    return kind == T::kKind ? static_cast<T*>(this) : nullptr;
  }
  template <typename T>
  const T* as() const {
    return kind == T::kKind ? static_cast<const T*>(this) : nullptr;
  }

  const StmtKind kind;
};
using StmtPtr = std::unique_ptr<StmtNode>;

struct ForNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kFor;
  ForNode() : StmtNode(kKind) {}
  Expr var;  // int64 Var; its name is unique in the program
  int64_t extent = 1;
  ForKind for_kind = ForKind::kSerial;
  std::string thread_tag;  // "blockIdx.x", "threadIdx.y", ... when bound
  Annotations annotations;
  StmtPtr body;
};

struct SeqNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kSeq;
  SeqNode() : StmtNode(kKind) {}
  std::vector<StmtPtr> stmts;
};

struct IterVar {
  Expr var;
  int64_t extent = 1;
  IterType type = IterType::kSpatial;
};

struct BlockNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kBlock;
  BlockNode() : StmtNode(kKind) {}
  std::string name;  // unique in the program
  std::vector<IterVar> iter_vars;
  std::vector<Expr> iter_values;  // one per iter var, over enclosing loop vars
  Expr predicate = True();
  std::vector<BufferPtr> alloc_buffers;
  StmtPtr init;  // may be null
  StmtPtr body;
  Annotations annotations;

  bool IsReduction() const;
};

struct StoreNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kStore;
  StoreNode() : StmtNode(kKind) {}
  BufferPtr buffer;
  std::vector<Expr> indices;
  Expr value;
};

struct IfNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kIf;
  IfNode() : StmtNode(kKind) {}
  Expr cond;
  StmtPtr then_case;
  StmtPtr else_case;  // may be null
};

// Builders.
StmtPtr MakeStore(BufferPtr buffer, std::vector<Expr> indices, Expr value);
std::unique_ptr<ForNode> MakeFor(Expr var, int64_t extent, StmtPtr body,
                                 ForKind kind = ForKind::kSerial);
// A Seq of the statements; a single statement is returned as is.
StmtPtr MakeSeq(std::vector<StmtPtr> stmts);
StmtPtr MakeIf(Expr cond, StmtPtr then_case, StmtPtr else_case = nullptr);

// Deep copy. Expressions, Vars and buffers are shared (they are immutable).
StmtPtr CloneStmt(const StmtNode& stmt);
std::unique_ptr<BlockNode> CloneBlock(const BlockNode& block);

// Calls fn(slot) for the owning slot of each direct child, in execution
// order (what ChildSlots lists, without building the list: the walks of
// every primitive go through it).
template <typename Fn>
void ForEachChildSlot(StmtNode* stmt, Fn&& fn);

// The direct children of a statement, in execution order.
std::vector<StmtNode*> ChildStmts(StmtNode* stmt);
// The owning slots of the direct children (to replace a child in place).
std::vector<StmtPtr*> ChildSlots(StmtNode* stmt);

// Pre-order walk; stops descending below a node when fn returns false.
void VisitStmts(StmtNode* root, const std::function<bool(StmtNode*)>& fn);
void VisitStmts(const StmtNode* root,
                const std::function<bool(const StmtNode*)>& fn);

// Calls fn on every expression held directly by stmt (not its children):
// iter values, predicate, store indices and value, if condition (uses, not
// definitions: loop and iteration variables are not visited).
void VisitOwnExprs(const StmtNode& stmt,
                   const std::function<void(const Expr&)>& fn);
// Replaces every expression held directly by stmt with fn(expr).
void MutateOwnExprs(StmtNode* stmt, const std::function<Expr(const Expr&)>& fn);
// Applies MutateOwnExprs to every statement in the tree below and at root.
void MutateAllExprs(StmtNode* root, const std::function<Expr(const Expr&)>& fn);

// Maps each statement below root to its parent.
std::map<const StmtNode*, StmtNode*> ParentMap(StmtNode* root);

template <typename Fn>
void ForEachChildSlot(StmtNode* stmt, Fn&& fn) {
  auto visit = [&](StmtPtr& s) {
    if (s) fn(s);
  };
  switch (stmt->kind) {
    case StmtKind::kFor:
      visit(stmt->as<ForNode>()->body);
      break;
    case StmtKind::kSeq:
      for (auto& s : stmt->as<SeqNode>()->stmts) visit(s);
      break;
    case StmtKind::kBlock:
      visit(stmt->as<BlockNode>()->init);
      visit(stmt->as<BlockNode>()->body);
      break;
    case StmtKind::kStore:
      break;
    case StmtKind::kIf:
      visit(stmt->as<IfNode>()->then_case);
      visit(stmt->as<IfNode>()->else_case);
      break;
  }
}

}  // namespace lathe
