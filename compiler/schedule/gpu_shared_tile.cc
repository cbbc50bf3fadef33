// The shared-memory tile (gpu_shared_tile.h).
#include "compiler/schedule/gpu_shared_tile.h"

#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/analysis/reused_stage.h"
#include "compiler/schedule/layout.h"
#include "compiler/schedule/primitive/compute_inline.h"

namespace lathe {
namespace {

bool IsReductionLoop(const BlockNode& block, const ForNode& loop) {
  for (size_t i = 0; i < block.iter_vars.size(); ++i) {
    if (block.iter_values[i].same_as(loop.var))
      return block.iter_vars[i].type == IterType::kReduce;
  }
  return false;
}

// A shared tile's layout: the last two dimensions swapped when the last is
// indexed by a reduction variable and the one before it is not (A[i, k] as
// [k, i]), so that a thread's register tile reads neighbouring elements
// for each k (vector loads from shared memory); else as it is.
Layout ReductionInnermost(const BlockNode& block,
                          const std::vector<Expr>& indices) {
  const size_t rank = indices.size();
  if (rank < 2) return {};
  auto uses_reduction = [&](const Expr& index) {
    bool found = false;
    for (const IterVar& iv : block.iter_vars) {
      if (iv.type == IterType::kReduce) found |= UsesVar(index, iv.var);
    }
    return found;
  };
  if (!uses_reduction(indices[rank - 1]) || uses_reduction(indices[rank - 2])) {
    return {};
  }
  Layout layout;
  for (size_t d = 0; d < rank; ++d)
    layout.permutation.push_back(static_cast<int64_t>(d));
  std::swap(layout.permutation[rank - 1], layout.permutation[rank - 2]);
  return layout;
}

bool IsFixed(const Factor& f) { return std::holds_alternative<int64_t>(f); }

// Whether an axis's registers come in groups: a sampled count (which may be
// 1) or a fixed one above 1. A fixed 1 keeps the three-way split.
bool Grouped(const SharedTileAxis& axis) {
  const int64_t* fixed = std::get_if<int64_t>(&axis.groups);
  return fixed == nullptr || *fixed > 1;
}

// The loops a tiled axis is split into, below its outer part.
struct AxisParts {
  std::vector<LoopRV>* groups;
  std::vector<LoopRV>* threads;
  std::vector<LoopRV>* registers;
};

// Splits `loop` of a tiled axis by [groups (when Grouped),] threads,
// registers, after an outer part when `outer` is given (the block's loop
// of the axis, inferred), and appends the parts to `outer` and `into`.
absl::Status SplitAxis(ConcreteSchedule* sch, LoopRV loop,
                       const SharedTileAxis& axis, std::vector<LoopRV>* outer,
                       const AxisParts& into) {
  std::vector<Factor> factors;
  if (outer != nullptr) factors.push_back(Factor{});
  if (Grouped(axis)) factors.push_back(axis.groups);
  factors.push_back(axis.threads);
  factors.push_back(axis.registers);
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch->Split(loop, factors));
  if (outer != nullptr) outer->push_back(parts.front());
  if (Grouped(axis)) into.groups->push_back(parts[parts.size() - 3]);
  into.threads->push_back(parts[parts.size() - 2]);
  into.registers->push_back(parts.back());
  return absl::OkStatus();
}

// Folds into a shared tile's copy (block `cache`) each element-wise stage
// that produces what it copies and calls no math function: a convolution's
// padding, select(in bounds, X[..], 0), becomes the copy's guarded load of
// X instead of a kernel and a pass over memory of its own. Each element is
// then computed once per block whose tile holds it (the halo's few times),
// where a math call would be repeated for every block that shares the
// tile. Tried on a copy first: a stage compute_inline refuses (another
// reader) stays, and leaves nothing in the trace.
absl::Status InlineCopiedStages(ConcreteSchedule* sch, BlockRV cache) {
  LATHE_ASSIGN_OR_RETURN(std::string cache_name, sch->BlockName(cache));
  const BlockNode* copy = sch->program().FindBlock(cache_name);
  if (copy == nullptr) return absl::OkStatus();
  std::vector<std::string> stages;
  for (const BufferPtr& copied : BuffersRead(*copy)) {
    for (const BlockNode* block : sch->program().Blocks()) {
      // A stage is one store (what compute_inline takes).
      const auto* store = block->body ? block->body->as<StoreNode>() : nullptr;
      if (block != copy && !block->IsReduction() && store != nullptr &&
          store->buffer == copied && !HasMathCall(store->value)) {
        stages.push_back(block->name);
      }
    }
  }
  for (const std::string& stage : stages) {
    Program trial = sch->program();
    if (!primitive::ComputeInline(&trial, stage).ok()) continue;
    LATHE_ASSIGN_OR_RETURN(BlockRV rv, sch->GetBlock(stage));
    LATHE_RETURN_IF_ERROR(sch->ComputeInline(rv));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ValueOf(const ConcreteSchedule& sch, const Factor& f) {
  if (const auto* c = std::get_if<int64_t>(&f)) return *c;
  if (const auto* rv = std::get_if<ExprRV>(&f)) return sch.Value(*rv);
  return absl::InvalidArgumentError("a shared tile's factor is not given");
}

}  // namespace

std::vector<std::vector<Expr>> DistinctReadIndices(const BlockNode& block) {
  std::set<const Buffer*> written, seen;
  std::vector<std::vector<Expr>> reads;
  VisitStmts(block.body.get(), [&](const StmtNode* s) {
    if (const auto* store = s->as<StoreNode>())
      written.insert(store->buffer.get());
    return true;
  });
  VisitStmts(block.body.get(), [&](const StmtNode* s) {
    VisitOwnExprs(*s, [&](const Expr& e) {
      VisitExpr(e, [&](const Expr& x) {
        if (x.is(ExprKind::kLoad) && !written.count(x->buffer.get()) &&
            seen.insert(x->buffer.get()).second) {
          reads.push_back(x->operands);
        }
      });
    });
    return true;
  });
  return reads;
}

absl::StatusOr<BlockRV> CacheOutputLocally(ConcreteSchedule* sch,
                                           BlockRV block) {
  LATHE_ASSIGN_OR_RETURN(BlockRV write_back,
                         sch->CacheWrite(block, 0, "local"));
  LATHE_ASSIGN_OR_RETURN(std::vector<BlockRV> consumers,
                         sch->GetConsumers(write_back));
  for (BlockRV consumer : consumers) {
    const BlockNode* c =
        sch->program().FindBlock(sch->BlockName(consumer).value());
    if (c != nullptr && !c->IsReduction())
      sch->ReverseComputeInline(consumer).IgnoreError();
  }
  return write_back;
}

absl::Status ApplySharedTile(ConcreteSchedule* sch, const std::string& name,
                             bool fuse_reductions,
                             const ChooseSharedTile& choose,
                             int64_t max_shared_elements) {
  LATHE_ASSIGN_OR_RETURN(BlockRV block, sch->GetBlock(name));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch->GetLoops(block));
  const BlockNode* node = sch->program().FindBlock(name);
  std::vector<LoopRV> spatial, reduce;
  std::vector<int64_t> spatial_extents, reduce_extents;
  int64_t reduction = 1;
  for (LoopRV l : loops) {
    LATHE_ASSIGN_OR_RETURN(std::string loop_name, sch->LoopName(l));
    const ForNode* loop = sch->program().FindLoop(loop_name);
    if (!IsReductionLoop(*node, *loop)) {
      spatial.push_back(l);
      spatial_extents.push_back(loop->extent);
    } else {
      reduce.push_back(l);
      reduce_extents.push_back(loop->extent);
      reduction *= loop->extent;
    }
  }
  const size_t n = spatial.size();
  if (n < 2 || reduce.empty()) {
    return absl::FailedPreconditionError(
        "a shared-memory tile needs two spatial loops and a reduction");
  }
  // The reduction loops, fused into one when asked.
  std::vector<LoopRV> order = spatial;
  order.insert(order.end(), reduce.begin(), reduce.end());
  LATHE_RETURN_IF_ERROR(sch->Reorder(order));
  if (fuse_reductions && reduce.size() > 1) {
    LATHE_ASSIGN_OR_RETURN(LoopRV k, sch->Fuse(reduce));
    reduce = {k};
    reduce_extents = {reduction};
  }
  LATHE_ASSIGN_OR_RETURN(
      const SharedTileFactors f,
      choose(sch, {spatial, spatial_extents, reduce, reduce_extents}));
  if (f.axes.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("a shared-memory tile got factors for ", f.axes.size(),
                     " loops, not its ", n, " spatial loops"));
  }
  // The tiled axes' thread factors, in loop order.
  std::vector<Factor> thread_factors;
  bool fixed = IsFixed(f.lanes);
  int64_t threads = 1;
  for (const std::optional<SharedTileAxis>& axis : f.axes) {
    if (!axis.has_value()) continue;
    thread_factors.push_back(axis->threads);
    fixed &= IsFixed(axis->threads) && IsFixed(axis->groups);
    LATHE_ASSIGN_OR_RETURN(const int64_t t, ValueOf(*sch, axis->threads));
    threads *= t;
  }
  if (thread_factors.size() < 2) {
    return absl::InvalidArgumentError(
        "a shared-memory tile needs factors for two spatial loops");
  }
  std::vector<LoopRV> outer, group_parts, thread_parts, register_parts;
  for (size_t d = 0; d < n; ++d) {
    if (!f.axes[d].has_value()) {
      outer.push_back(spatial[d]);
      continue;
    }
    LATHE_RETURN_IF_ERROR(
        SplitAxis(sch, spatial[d], *f.axes[d], &outer,
                  {&group_parts, &thread_parts, &register_parts}));
  }
  // The first reduction loop into [chunks, chunk]: the chunks outside the
  // threads (a shared tile per chunk), the chunk and the other reduction
  // loops, whole and in their order (reorder does not reassociate a
  // reduction), inside.
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> kc,
                         sch->Split(reduce.front(), {Factor{}, f.k_chunk}));
  std::vector<LoopRV> in_chunk = {kc[1]};
  in_chunk.insert(in_chunk.end(), reduce.begin() + 1, reduce.end());
  order = outer;
  order.push_back(kc[0]);
  order.insert(order.end(), thread_parts.begin(), thread_parts.end());
  order.insert(order.end(), in_chunk.begin(), in_chunk.end());
  order.insert(order.end(), group_parts.begin(), group_parts.end());
  order.insert(order.end(), register_parts.begin(), register_parts.end());
  LATHE_RETURN_IF_ERROR(sch->Reorder(order));
  LATHE_ASSIGN_OR_RETURN(BlockRV write_back, CacheOutputLocally(sch, block));
  LATHE_ASSIGN_OR_RETURN(LoopRV block_loop, sch->Fuse(outer));
  LATHE_RETURN_IF_ERROR(sch->Bind(block_loop, "blockIdx.x"));
  // The write-back: after the K loop, each thread its own outputs (moved
  // before the thread loops are fused: their instances are a box). With
  // sampled factors, unit loops stay, so that the write-back has one loop
  // per spatial loop whatever the decisions; fixed factors drop them, and
  // the tiled loops are the last ones.
  LATHE_RETURN_IF_ERROR(sch->ReverseComputeAt(write_back, block_loop,
                                              /*preserve_unit_loops=*/!fixed));
  LATHE_ASSIGN_OR_RETURN(LoopRV thread_loop, sch->Fuse(thread_parts));
  LATHE_RETURN_IF_ERROR(sch->Bind(thread_loop, "threadIdx.x"));
  {
    LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> wb, sch->GetLoops(write_back));
    const size_t tiled = thread_factors.size();
    // Below the block loop: one loop per spatial loop (sampled), or per
    // tiled loop (fixed).
    const size_t expected = 1 + (fixed ? tiled : n);
    if (wb.size() != expected) {
      return absl::FailedPreconditionError("the write-back lost its tile");
    }
    // Each thread writes back the accumulators it computed: the same
    // groups, threads and registers as the products.
    std::vector<LoopRV> wb_groups, wb_threads, wb_registers;
    size_t factor = 0;
    for (size_t d = 0; d < n; ++d) {
      if (!f.axes[d].has_value()) continue;
      const size_t at = fixed ? 1 + factor : 1 + d;
      LATHE_RETURN_IF_ERROR(
          SplitAxis(sch, wb[at], *f.axes[d], nullptr,
                    {&wb_groups, &wb_threads, &wb_registers}));
      ++factor;
    }
    std::vector<LoopRV> wb_order = wb_threads;
    wb_order.insert(wb_order.end(), wb_groups.begin(), wb_groups.end());
    wb_order.insert(wb_order.end(), wb_registers.begin(), wb_registers.end());
    LATHE_RETURN_IF_ERROR(sch->Reorder(wb_order));
    LATHE_ASSIGN_OR_RETURN(LoopRV wt, sch->Fuse(wb_threads));
    LATHE_RETURN_IF_ERROR(sch->Bind(wt, "threadIdx.x"));
    for (LoopRV l : wb_groups) LATHE_RETURN_IF_ERROR(sch->Unroll(l));
    for (LoopRV l : wb_registers) LATHE_RETURN_IF_ERROR(sch->Unroll(l));
  }
  // The init: before the K loops, under a copy of the thread loop.
  LATHE_ASSIGN_OR_RETURN(BlockRV init, sch->DecomposeReduction(block, kc[0]));
  {
    LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> nest, sch->GetLoops(init));
    bool below = false;
    for (LoopRV l : nest) {
      LATHE_ASSIGN_OR_RETURN(std::string loop_name, sch->LoopName(l));
      const ForNode* loop = sch->program().FindLoop(loop_name);
      if (below) LATHE_RETURN_IF_ERROR(sch->Unroll(l));
      below |= loop->for_kind == ForKind::kThreadBinding &&
               loop->thread_tag == "threadIdx.x";
    }
  }
  // The tiles of the inputs, copied to shared memory at each K chunk by all
  // the threads.
  int64_t shared_elements = 0;
  const std::vector<std::vector<Expr>> read_indices =
      DistinctReadIndices(*sch->program().FindBlock(name));
  for (int64_t read = 0;; ++read) {
    absl::StatusOr<BlockRV> cache =
        sch->CacheRead(block, read, "shared",
                       read < static_cast<int64_t>(read_indices.size())
                           ? ReductionInnermost(*sch->program().FindBlock(name),
                                                read_indices[read])
                           : Layout{});
    if (absl::IsInvalidArgument(cache.status())) break;
    if (!cache.ok()) return cache.status();
    // Sampled: unit loops stay, so that the copy has the same loops for
    // every decision.
    LATHE_RETURN_IF_ERROR(
        sch->ComputeAt(*cache, kc[0], /*preserve_unit_loops=*/!fixed));
    LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> copy, sch->GetLoops(*cache));
    LATHE_ASSIGN_OR_RETURN(std::string chunk_name, sch->LoopName(kc[0]));
    std::vector<LoopRV> inner;
    bool below = false;
    int64_t elements = 1;
    for (LoopRV l : copy) {
      LATHE_ASSIGN_OR_RETURN(std::string loop_name, sch->LoopName(l));
      if (below) {
        inner.push_back(l);
        elements *= sch->program().FindLoop(loop_name)->extent;
      }
      below |= loop_name == chunk_name;
    }
    if (inner.empty()) {
      return absl::FailedPreconditionError("a cached tile has no loops");
    }
    shared_elements += elements;
    // `lanes` neighbouring elements of the innermost copy loop per thread
    // and step (vector loads from device memory): with a fixed width only
    // where they divide it and the steps.
    LATHE_ASSIGN_OR_RETURN(std::string last_name, sch->LoopName(inner.back()));
    const int64_t last = sch->program().FindLoop(last_name)->extent;
    std::optional<LoopRV> lanes;
    bool split_lanes = !IsFixed(f.lanes);
    if (!split_lanes) {
      const int64_t width = std::get<int64_t>(f.lanes);
      split_lanes =
          width > 1 && last % width == 0 && (elements / width) % threads == 0;
    }
    if (split_lanes) {
      LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> split,
                             sch->Split(inner.back(), {Factor{}, f.lanes}));
      inner.back() = split[0];
      lanes = split[1];
    }
    LoopRV fused = inner.front();
    if (inner.size() > 1) {
      LATHE_ASSIGN_OR_RETURN(fused, sch->Fuse(inner));
    }
    LoopRV copy_threads;
    LoopRV steps;
    if (fixed) {
      LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> parts,
                             sch->Split(fused, {Factor{}, Factor{threads}}));
      steps = parts[0];
      copy_threads = parts[1];
    } else {
      std::vector<Factor> factors = {Factor{}};
      factors.insert(factors.end(), thread_factors.begin(),
                     thread_factors.end());
      LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> parts,
                             sch->Split(fused, factors));
      steps = parts[0];
      LATHE_ASSIGN_OR_RETURN(
          copy_threads,
          sch->Fuse(std::vector<LoopRV>(parts.begin() + 1, parts.end())));
    }
    LATHE_RETURN_IF_ERROR(sch->Bind(copy_threads, "threadIdx.x"));
    LATHE_RETURN_IF_ERROR(sch->Unroll(steps));
    if (lanes.has_value()) LATHE_RETURN_IF_ERROR(sch->Vectorize(*lanes));
    LATHE_RETURN_IF_ERROR(InlineCopiedStages(sch, *cache));
  }
  const int64_t bound = std::min(max_shared_elements, kMaxSharedTileElements);
  if (fixed && shared_elements > bound) {
    return absl::FailedPreconditionError(
        absl::StrCat("the shared tiles hold ", shared_elements,
                     " elements, more than ", bound));
  }
  // The accumulators stay in registers only when every loop that indexes
  // them is unrolled.
  for (LoopRV l : in_chunk) LATHE_RETURN_IF_ERROR(sch->Unroll(l));
  for (LoopRV l : group_parts) LATHE_RETURN_IF_ERROR(sch->Unroll(l));
  for (LoopRV l : register_parts) LATHE_RETURN_IF_ERROR(sch->Unroll(l));
  return absl::OkStatus();
}

}  // namespace lathe
