// Building new stages (a block under its own loop nest) and placing
// statements in a program: what cache_read, cache_write, decompose_reduction
// and rfactor share.
//
// - NameAllocator hands out names that are fresh in the program AND distinct
//   from each other, while the new statements are not yet in the program (a
//   bare Program::FreshName would hand out the same name twice).
// - BuildStageNest makes `for ax0: for ax1: ... block` with one loop per
//   iteration variable, each variable bound to its own loop.
// - TopLevelStmt / InsertBeside place statements in the root's sequence or
//   next to a loop.
// Tests: through the primitives that use them
// (tests/compiler/schedule/primitive/{cache_read,cache_write,
// decompose_reduction,rfactor}_test.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"
#include "compiler/schedule/layout.h"

namespace lathe {

class NameAllocator {
 public:
  explicit NameAllocator(const Program& program) : program_(program) {}
  // A name based on hint, unused in the program and not handed out before.
  std::string Fresh(const std::string& hint);

 private:
  const Program& program_;
  std::set<std::string> taken_;
};

struct IterVarSpec {
  std::string
      loop_hint;  // the loop's name hint; the variable is "v" + loop name
  int64_t extent = 1;
  IterType type = IterType::kSpatial;
};

struct StageNest {
  StmtPtr nest;  // the outermost loop (or the block when no loops)
  BlockNode* block = nullptr;   // owned by nest; body and init left empty
  std::vector<Expr> iter_vars;  // one per spec, in order
};

// A block named block_name with one iteration variable per spec, each bound
// to a new serial loop of the same extent, loops nested in the order of specs.
StageNest BuildStageNest(NameAllocator* names, const std::string& block_name,
                         const std::vector<IterVarSpec>& specs);

// The statement of the root block's body (an element of its sequence, or the
// whole body when it is not a sequence) that contains stmt; nullptr when
// stmt is not inside the root's body.
StmtNode* TopLevelStmt(const Program& program, const StmtNode* stmt);

// Inserts stmt right before (after = false) or after anchor, in anchor's
// parent: spliced into the parent's sequence, or replacing anchor by a new
// sequence of the two. False when anchor has no parent.
bool InsertBeside(Program* program, const StmtNode* anchor, StmtPtr stmt,
                  bool after);

// Blocks (other than root) inside stmt, stmt included, in execution order.
std::vector<BlockNode*> BlocksIn(StmtNode* stmt);

// Rewrites the accesses of `from` in block's init and body (not in nested
// blocks): loads always, stores when `stores` is set, to access `to` at
// map_indices(indices) instead.
void RedirectAccesses(
    BlockNode* block, const BufferPtr& from, const BufferPtr& to,
    const std::function<std::vector<Expr>(const std::vector<Expr>&)>&
        map_indices,
    bool stores);

// The cache buffer that cache_read / cache_write (`primitive`) makes of the
// index-th of `buffers` (the block's distinct reads or writes, `verb` says
// which): that buffer and the cache's shape under `layout`. Errors
// (InvalidArgument): an index out of range, a layout that does not fit.
struct CacheChoice {
  BufferPtr buffer;
  std::vector<int64_t> cache_shape;
};
absl::StatusOr<CacheChoice> ChooseCachedBuffer(
    const std::vector<BufferPtr>& buffers, int64_t index, const Layout& layout,
    const std::string& primitive, const std::string& block, const char* verb);

}  // namespace lathe
