// CacheWriteOutput (cache_write_output.h).
// Tests: tests/tuner/space/cache_write_output_test.cc.
#include "tuner/space/cache_write_output.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status_macros.h"

namespace lathe::tuner {
namespace {

// The dimension of the block's written buffer indexed by iteration variable
// `iter`, or -1.
int DimOf(const BlockNode& block, int iter) {
  if (iter < 0) return -1;
  const BlockAccesses accesses = AccessesOf(block);
  if (accesses.writes.empty()) return -1;
  const std::vector<Expr>& indices = accesses.writes.front().indices;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (indices[d].same_as(block.iter_vars[iter].var))
      return static_cast<int>(d);
  }
  return -1;
}

// Whether a block other than `except` reads `buffer`.
bool HasOtherReaders(const Program& program, const Buffer* buffer,
                     const std::string& except) {
  for (const BlockNode* b : program.Blocks()) {
    if (b->name == except) continue;
    for (const BufferAccess& read : AccessesOf(*b).reads) {
      if (read.buffer.get() == buffer) return true;
    }
  }
  return false;
}

// Step 2: folds the element-wise consumers of the write-back into it, again
// while one folds (dense + bias + relu: bias, then relu). A consumer the
// primitive refuses stays a stage of its own.
absl::Status FoldConsumers(TracedSchedule* schedule, BlockRV write_back) {
  for (int round = 0; round < 8; ++round) {
    LATHE_ASSIGN_OR_RETURN(std::string name, schedule->BlockName(write_back));
    const BlockNode* node = schedule->program().FindBlock(name);
    const BlockAccesses accesses = AccessesOf(*node);
    if (accesses.writes.empty() ||
        !HasOtherReaders(schedule->program(),
                         accesses.writes.front().buffer.get(), name)) {
      return absl::OkStatus();
    }
    LATHE_ASSIGN_OR_RETURN(std::vector<BlockRV> consumers,
                           schedule->GetConsumers(write_back));
    bool folded = false;
    for (BlockRV consumer : consumers) {
      LATHE_ASSIGN_OR_RETURN(std::string consumer_name,
                             schedule->BlockName(consumer));
      const BlockNode* c = schedule->program().FindBlock(consumer_name);
      if (c == nullptr || c->IsReduction()) continue;
      folded |= schedule->ReverseComputeInline(consumer).ok();
    }
    if (!folded) return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace

Layout OutputCacheLayout(const BlockNode& block, const TilePlan& plan) {
  if (!plan.transposed_output) return {};
  const BlockAccesses accesses = AccessesOf(block);
  LATHE_CHECK(!accesses.writes.empty(), "output cache layout: block \"",
              block.name, "\" writes nothing");
  const int rank = static_cast<int>(accesses.writes.front().indices.size());
  const int vector_dim = DimOf(block, plan.vector_iter);
  LATHE_CHECK(vector_dim >= 0,
              "output cache layout: the vector variable of block \"",
              block.name, "\" indexes no dimension of its output");
  Layout layout;
  layout.splits.assign(rank, 1);
  for (int d = 0; d < rank; ++d) {
    if (d != vector_dim) layout.permutation.push_back(d);
  }
  layout.permutation.push_back(vector_dim);
  return layout;
}

absl::StatusOr<OutputCache> CacheWriteOutput(TracedSchedule* schedule,
                                             const TiledNest& nest) {
  const BlockNode* node = schedule->program().FindBlock(nest.block_name);
  if (node == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("cache_write_output: no block \"", nest.block_name, "\""));
  }
  const TilePlan& plan = nest.plan;
  const Layout layout = OutputCacheLayout(*node, plan);
  const int rank =
      static_cast<int>(AccessesOf(*node).writes.front().indices.size());
  const int vector_dim = DimOf(*node, plan.vector_iter);
  const int row_dim = DimOf(*node, plan.row_iter);
  if (nest.middle.empty() || nest.reduce_outer.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cache_write_output: block \"", nest.block_name,
                     "\" has no middle or reduction level"));
  }

  // 1-3. The cache, the folded consumers, the write-back under the tile.
  OutputCache cache;
  LATHE_ASSIGN_OR_RETURN(
      cache.write_back,
      schedule->CacheWrite(nest.block, /*write_index=*/0, "local", layout));
  LATHE_RETURN_IF_ERROR(FoldConsumers(schedule, cache.write_back));
  LATHE_RETURN_IF_ERROR(
      schedule->ReverseComputeAt(cache.write_back, nest.middle.back(),
                                 /*preserve_unit_loops=*/true));

  // 4. The init out of the reduction: its loops end with the copies of the
  //    register level (row, vector).
  LATHE_ASSIGN_OR_RETURN(
      cache.init,
      schedule->DecomposeReduction(nest.block, nest.reduce_outer.front()));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> init_loops,
                         schedule->GetLoops(cache.init));
  LATHE_RETURN_IF_ERROR(schedule->Vectorize(init_loops.back()));
  if (nest.row_loop.has_value() && init_loops.size() >= 2) {
    LATHE_RETURN_IF_ERROR(schedule->Unroll(init_loops[init_loops.size() - 2]));
  }

  // 5. The write-back: one loop per output dimension, in order, under the
  //    loops of the tile (unit loops preserved).
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> back_loops,
                         schedule->GetLoops(cache.write_back));
  if (static_cast<int>(back_loops.size()) < rank) {
    return absl::InternalError(absl::StrCat(
        "cache_write_output: the write-back of \"", nest.block_name, "\" has ",
        back_loops.size(), " loops for ", rank, " dimensions"));
  }
  auto dim_loop = [&](int d) {
    return back_loops[back_loops.size() - rank + d];
  };
  if (!plan.transposed_output) {
    if (vector_dim == rank - 1)
      LATHE_RETURN_IF_ERROR(schedule->Vectorize(dim_loop(vector_dim)));
    if (row_dim >= 0)
      LATHE_RETURN_IF_ERROR(schedule->Unroll(dim_loop(row_dim)));
  } else {
    // The vector and row dimensions innermost, so that their unrolled copies
    // are straight-line code: unrolled around another loop (conv's p between
    // k and q), LLVM took seconds per kernel.
    std::vector<LoopRV> order;
    for (int d = 0; d < rank; ++d) {
      if (d != vector_dim && d != row_dim) order.push_back(dim_loop(d));
    }
    order.push_back(dim_loop(vector_dim));
    if (row_dim >= 0) order.push_back(dim_loop(row_dim));
    LATHE_RETURN_IF_ERROR(schedule->Reorder(order));
    LATHE_RETURN_IF_ERROR(schedule->Unroll(dim_loop(vector_dim)));
    if (row_dim >= 0)
      LATHE_RETURN_IF_ERROR(schedule->Unroll(dim_loop(row_dim)));
  }
  return cache;
}

}  // namespace lathe::tuner
