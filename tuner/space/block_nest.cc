// Block nest queries (block_nest.h).
// Tests: tests/tuner/space/block_nest_test.cc.
#include "tuner/space/block_nest.h"

#include <algorithm>
#include <set>

#include "compiler/ir/expr_functor.h"

namespace lathe::tuner {
namespace {

// The statement directly under the root's body that contains `stmt`.
const StmtNode* TopLevelStmt(const Program& program, const StmtNode* stmt) {
  const StmtNode* current = stmt;
  while (true) {
    const StmtNode* parent = program.ParentOf(current);
    if (parent == nullptr || parent == program.root.get()) return current;
    // A sequence directly in the root holds several top-level statements.
    if (parent->kind == StmtKind::kSeq &&
        program.ParentOf(parent) == program.root.get()) {
      return current;
    }
    current = parent;
  }
}

}  // namespace

bool AloneAtRoot(const Program& program, const BlockNode& block) {
  if (program.EnclosingBlock(&block) != program.root.get()) return false;
  const StmtNode* top = TopLevelStmt(program, &block);
  int blocks = 0;
  VisitStmts(top, [&](const StmtNode* s) {
    if (s->kind == StmtKind::kBlock) ++blocks;
    return true;
  });
  return blocks == 1;
}

std::optional<std::vector<NestLoop>> OwnNest(const Program& program,
                                             const BlockNode& block) {
  if (!AloneAtRoot(program, block)) return std::nullopt;
  std::vector<ForNode*> loops = program.LoopsAbove(&block);
  if (loops.empty() || loops.size() != block.iter_vars.size())
    return std::nullopt;
  std::vector<NestLoop> nest;
  std::vector<bool> bound(block.iter_vars.size(), false);
  for (const ForNode* loop : loops) {
    if (loop->for_kind != ForKind::kSerial) return std::nullopt;
    int index = -1;
    for (size_t i = 0; i < block.iter_values.size(); ++i) {
      if (!block.iter_values[i].same_as(loop->var)) continue;
      if (index >= 0 || bound[i]) return std::nullopt;
      index = static_cast<int>(i);
    }
    if (index < 0) return std::nullopt;
    bound[index] = true;
    nest.push_back({loop, index, block.iter_vars[index].type, loop->extent});
  }
  return nest;
}

bool IsTiled(const BlockNode& block) {
  return block.annotations.count(kTiledAnnotation) > 0;
}

bool IsPlaced(const BlockNode& block) {
  return block.annotations.count(kPlacedAnnotation) > 0;
}

int64_t IterProduct(const BlockNode& block, IterType type) {
  int64_t product = 1;
  for (const IterVar& iv : block.iter_vars) {
    if (iv.type == type) product *= iv.extent;
  }
  return product;
}

std::vector<BufferAccess> Operands(const BlockNode& block) {
  BlockAccesses accesses = AccessesOf(block);
  std::set<const Buffer*> written;
  for (const BufferAccess& w : accesses.writes) written.insert(w.buffer.get());
  std::vector<BufferAccess> operands;
  for (BufferAccess& r : accesses.reads) {
    if (!written.count(r.buffer.get())) operands.push_back(std::move(r));
  }
  return operands;
}

bool HasDataReuse(const BlockNode& block) {
  for (const BufferAccess& read : Operands(block)) {
    for (const IterVar& iv : block.iter_vars) {
      if (iv.type == IterType::kSpatial && iv.extent >= 2 &&
          !AccessUses(read, iv.var)) {
        return true;
      }
    }
  }
  return false;
}

bool StoresEndWith(const BlockNode& block, int iter) {
  const BlockAccesses accesses = AccessesOf(block);
  if (accesses.writes.empty()) return false;
  for (const BufferAccess& write : accesses.writes) {
    if (write.indices.empty() ||
        !write.indices.back().same_as(block.iter_vars[iter].var)) {
      return false;
    }
  }
  return true;
}

bool AccessUses(const BufferAccess& access, const Expr& var) {
  return std::any_of(access.indices.begin(), access.indices.end(),
                     [&](const Expr& index) { return UsesVar(index, var); });
}

}  // namespace lathe::tuner
