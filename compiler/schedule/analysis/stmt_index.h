// An index of a program's statement tree, built in one walk.
//
// Program and block_motion.h answer "who is the parent", "which loops are
// above", "which blocks read this buffer", "which comes first" by walking the
// whole tree per question; that is simple and right for one primitive call,
// but a caller that asks hundreds of them about one program (ComputeLocations
// tries every loop above the consumers) spends its time in those walks. The
// index records, once: each statement's parent, its pre-order position and
// the end of its subtree (so "a contains b" and "a comes before b" are two
// comparisons), the blocks in execution order and their accesses. Every query
// gives exactly what its counterpart named in its comment gives.
//
// The index describes the program as it was when built: any edit of the tree
// invalidates it (statements are looked up by address).
// Tests: tests/compiler/schedule/analysis/stmt_index_test.cc.
#pragma once

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "compiler/arith/int_bounds.h"
#include "compiler/ir/program.h"

namespace lathe {

class StmtIndex {
 public:
  explicit StmtIndex(const Program& program);

  // Program::ParentOf: nullptr for the root and for statements not in the
  // program.
  StmtNode* ParentOf(const StmtNode* stmt) const;
  // Program::LoopsAbove: outermost first, up to the nearest enclosing block.
  std::vector<ForNode*> LoopsAbove(const StmtNode* stmt) const;
  // Program::EnclosingBlock.
  BlockNode* EnclosingBlock(const StmtNode* stmt) const;
  // loop_ranges.h LoopRangesAbove: every loop around stmt, through enclosing
  // blocks up to the root.
  VarRanges LoopRangesAbove(const StmtNode* stmt) const;

  // block_motion.h ComesBefore and Contains (both statements in the
  // program).
  bool ComesBefore(const StmtNode* a, const StmtNode* b) const;
  bool Contains(const StmtNode* ancestor, const StmtNode* stmt) const;

  // Program::Blocks: every block but the root, in execution order.
  const std::vector<BlockNode*>& Blocks() const { return blocks_; }
  // AccessesOf(block), computed when the index was built.
  const BlockAccesses& AccessesOf(const BlockNode* block) const;
  // block_motion.h WritersOf / ReadersOf / BlocksInterleaved.
  std::vector<BlockNode*> WritersOf(const Buffer* buffer) const;
  std::vector<BlockNode*> ReadersOf(const Buffer* buffer) const;
  std::vector<BlockNode*> BlocksInterleaved(const StmtNode* a,
                                            const StmtNode* b) const;

 private:
  struct Entry {
    StmtNode* parent = nullptr;
    int position = 0;  // pre-order, the root is 0
    int end = 0;       // one past the last position of the subtree
  };
  const Entry& At(const StmtNode* stmt) const;

  absl::flat_hash_map<const StmtNode*, Entry> entries_;
  std::vector<BlockNode*> blocks_;
  absl::flat_hash_map<const BlockNode*, BlockAccesses> accesses_;
};

}  // namespace lathe
