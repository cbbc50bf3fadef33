#include "compiler/schedule/analysis/stmt_index.h"

#include "base/check.h"

namespace lathe {
namespace {

bool Touches(const std::vector<BufferAccess>& accesses, const Buffer* buffer) {
  for (const BufferAccess& a : accesses) {
    if (a.buffer.get() == buffer) return true;
  }
  return false;
}

}  // namespace

StmtIndex::StmtIndex(const Program& program) {
  // Pre-order, children in ChildStmts order: the order of VisitStmts, hence
  // of Program::Blocks and of block_motion's positions.
  int next = 0;
  struct Frame {
    StmtNode* stmt;
    std::vector<StmtNode*> children;
    size_t next_child = 0;
  };
  std::vector<Frame> stack;
  auto enter = [&](StmtNode* stmt, StmtNode* parent) {
    Entry& e = entries_[stmt];
    e.parent = parent;
    e.position = next++;
    if (auto* b = stmt->as<BlockNode>(); b != nullptr && parent != nullptr) {
      blocks_.push_back(b);
      accesses_[b] = lathe::AccessesOf(*b);
    }
    stack.push_back({stmt, ChildStmts(stmt)});
  };
  if (program.root == nullptr) return;
  enter(program.root.get(), nullptr);
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next_child < top.children.size()) {
      StmtNode* child = top.children[top.next_child++];
      if (child != nullptr) enter(child, top.stmt);
      continue;
    }
    entries_[top.stmt].end = next;
    stack.pop_back();
  }
}

const StmtIndex::Entry& StmtIndex::At(const StmtNode* stmt) const {
  auto it = entries_.find(stmt);
  LATHE_CHECK(it != entries_.end(), "statement is not in the indexed program");
  return it->second;
}

StmtNode* StmtIndex::ParentOf(const StmtNode* stmt) const {
  auto it = entries_.find(stmt);
  return it == entries_.end() ? nullptr : it->second.parent;
}

std::vector<ForNode*> StmtIndex::LoopsAbove(const StmtNode* stmt) const {
  std::vector<ForNode*> loops;
  for (StmtNode* p = ParentOf(stmt); p != nullptr; p = ParentOf(p)) {
    if (p->kind == StmtKind::kBlock) break;
    if (auto* f = p->as<ForNode>()) loops.push_back(f);
  }
  return std::vector<ForNode*>(loops.rbegin(), loops.rend());
}

BlockNode* StmtIndex::EnclosingBlock(const StmtNode* stmt) const {
  for (StmtNode* p = ParentOf(stmt); p != nullptr; p = ParentOf(p)) {
    if (auto* b = p->as<BlockNode>()) return b;
  }
  return nullptr;
}

VarRanges StmtIndex::LoopRangesAbove(const StmtNode* stmt) const {
  VarRanges ranges;
  for (StmtNode* p = ParentOf(stmt); p != nullptr; p = ParentOf(p)) {
    if (auto* loop = p->as<ForNode>()) {
      ranges[loop->var.get()] = Interval::Extent(loop->extent);
    }
  }
  return ranges;
}

bool StmtIndex::ComesBefore(const StmtNode* a, const StmtNode* b) const {
  return At(a).position < At(b).position;
}

bool StmtIndex::Contains(const StmtNode* ancestor, const StmtNode* stmt) const {
  auto it = entries_.find(stmt);
  if (it == entries_.end()) return false;
  const Entry& a = At(ancestor);
  return a.position <= it->second.position && it->second.position < a.end;
}

const BlockAccesses& StmtIndex::AccessesOf(const BlockNode* block) const {
  auto it = accesses_.find(block);
  LATHE_CHECK(it != accesses_.end(), "block \"", block->name,
              "\" is not in the indexed program");
  return it->second;
}

std::vector<BlockNode*> StmtIndex::WritersOf(const Buffer* buffer) const {
  std::vector<BlockNode*> out;
  for (BlockNode* b : blocks_) {
    if (Touches(AccessesOf(b).writes, buffer)) out.push_back(b);
  }
  return out;
}

std::vector<BlockNode*> StmtIndex::ReadersOf(const Buffer* buffer) const {
  std::vector<BlockNode*> out;
  for (BlockNode* b : blocks_) {
    if (Touches(AccessesOf(b).reads, buffer)) out.push_back(b);
  }
  return out;
}

std::vector<BlockNode*> StmtIndex::BlocksInterleaved(const StmtNode* a,
                                                     const StmtNode* b) const {
  // As block_motion.cc: the blocks strictly between a and b in program order,
  // and every block under a loop that is or encloses a or b; blocks inside a
  // or b (when they are blocks) left out.
  std::vector<const StmtNode*> loops;
  for (const StmtNode* s : {a, b}) {
    for (const StmtNode* p = s; p != nullptr; p = ParentOf(p)) {
      if (p->kind == StmtKind::kFor) loops.push_back(p);
    }
  }
  const int pos_a = At(a).position;
  const int pos_b = At(b).position;
  std::vector<BlockNode*> out;
  for (BlockNode* y : blocks_) {
    if (y == a || y == b) continue;
    if ((a->kind == StmtKind::kBlock && Contains(a, y)) ||
        (b->kind == StmtKind::kBlock && Contains(b, y))) {
      continue;
    }
    const int pos_y = At(y).position;
    bool between = pos_a < pos_y && pos_y < pos_b;
    for (const StmtNode* l : loops) {
      if (between) break;
      between = Contains(l, y);
    }
    if (between) out.push_back(y);
  }
  return out;
}

}  // namespace lathe
