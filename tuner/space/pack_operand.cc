// PackOperands (pack_operand.h).
// Tests: tests/tuner/space/pack_operand_test.cc.
#include "tuner/space/pack_operand.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/ir/expr_functor.h"
#include "tuner/space/block_nest.h"

namespace lathe::tuner {
namespace {

// The distinct buffers that `block` reads and does not write, in order of
// first appearance: the numbering of cache_read's read_index.
std::vector<const Buffer*> ReadOrder(const BlockNode& block) {
  std::vector<const Buffer*> order;
  for (const BufferAccess& r : Operands(block)) {
    const Buffer* b = r.buffer.get();
    if (std::find(order.begin(), order.end(), b) == order.end()) {
      order.push_back(b);
    }
  }
  return order;
}

int64_t LargestDivisorAtMost(int64_t n, int64_t bound) {
  for (int64_t d = std::min(n, bound); d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

// One operand to pack, found before any cache_read changes the block.
struct PackCandidate {
  const Buffer* buffer = nullptr;
  std::string name;
  Layout layout;
  bool at_outer_loop = false;  // packed under the parallel outer loop
  bool layout_free = false;    // a layout-free input: packed whole at the root
  bool last_dim_last =
      false;            // the copy's inner loop is unit-stride on both sides
  int rank = 0;         // of the operand
  int vector_dim = -1;  // its dimension indexed by the vector variable
  int64_t panel = 1;    // the layout's split of that dimension
};

// The copy of an operand whose vector dimension is not its last (conv's
// W[K][C][R][S] -> [K/32][C][R][S][32]) iterates, as cache_read makes it, in
// the operand's order: its inner loop stores a panel's width apart (128
// bytes for conv), and each cache line of the panels is written back to 32
// times, from L2 once the panels outgrow L1. Splitting the vector
// dimension's loop by the panel and moving the part within a panel
// innermost makes the stores unit-stride and vectorized; the loads become a
// gather over rows that stay in L1 while the loops above step through them.
// The tuned conv2d kernels take about a tenth less time a call with it
// (bench/README.md, "Why the code is as it is").
// At the root the copy's outer loop runs in parallel, as
// ParallelVectorizeUnroll made it before the split hid the copy's nest from
// it (a copy at the outer loop already runs inside the parallel loop).
absl::Status StorePanelsInOrder(TracedSchedule* schedule, BlockRV pack,
                                const PackCandidate& c) {
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, schedule->GetLoops(pack));
  if (static_cast<int>(loops.size()) < c.rank || c.vector_dim + 1 >= c.rank) {
    return absl::InternalError(
        absl::StrCat("pack_operand: the copy of \"", c.name, "\" has ",
                     loops.size(), " loops for ", c.rank, " dimensions"));
  }
  const size_t own = loops.size() - static_cast<size_t>(c.rank);
  LATHE_ASSIGN_OR_RETURN(
      std::vector<LoopRV> parts,
      schedule->Split(loops[own + c.vector_dim], {Factor{}, Factor{c.panel}}));
  std::vector<LoopRV> inner_last(loops.begin() + own + c.vector_dim + 1,
                                 loops.end());
  inner_last.push_back(parts[1]);
  LATHE_RETURN_IF_ERROR(schedule->Reorder(inner_last));
  LATHE_RETURN_IF_ERROR(schedule->Vectorize(parts[1]));
  if (!c.at_outer_loop) {
    LATHE_RETURN_IF_ERROR(
        schedule->Parallel(c.vector_dim == 0 ? parts[0] : loops[own]));
  }
  return absl::OkStatus();
}

}  // namespace

int64_t PanelWidth(int64_t extent, const TilePlan& plan) {
  const int64_t tile = std::max<int64_t>(1, plan.vector_tile);
  if (extent % tile == 0) return tile;
  const int64_t divisor = LargestDivisorAtMost(extent, tile);
  if (divisor == extent || 2 * divisor >= plan.lanes) return divisor;
  return tile;
}

std::optional<Layout> PackLayoutFor(const BlockNode& block,
                                    const BufferAccess& read,
                                    const TilePlan& plan) {
  if (plan.vector_iter < 0) return std::nullopt;
  const Expr& vector_var = block.iter_vars[plan.vector_iter].var;
  const int rank = static_cast<int>(read.indices.size());
  // 1. The vector variable: a plain index of exactly one dimension.
  int vector_dim = -1;
  for (int d = 0; d < rank; ++d) {
    if (!UsesVar(read.indices[d], vector_var)) continue;
    if (vector_dim >= 0 || !read.indices[d].same_as(vector_var))
      return std::nullopt;
    vector_dim = d;
  }
  if (vector_dim < 0) return std::nullopt;
  // 2. Rows across the reduction: the first other dimension indexed by a
  //    reduction variable.
  int reduction_dim = -1;
  for (int d = 0; d < rank && reduction_dim < 0; ++d) {
    if (d == vector_dim) continue;
    for (const IterVar& iv : block.iter_vars) {
      if (iv.type == IterType::kReduce && UsesVar(read.indices[d], iv.var)) {
        reduction_dim = d;
        break;
      }
    }
  }
  if (reduction_dim < 0) return std::nullopt;
  // 3. Already one panel.
  const int64_t extent = read.buffer->shape[vector_dim];
  const int64_t width = plan.panel > 0 ? plan.panel : PanelWidth(extent, plan);
  if (vector_dim == rank - 1 && extent <= width) return std::nullopt;
  // 4. Split the vector dimension; its outer part goes before the reduction
  //    dimension, its inner part last. Split dimensions are numbered with
  //    the vector dimension's outer part at vector_dim, inner at +1.
  auto split_index = [&](int d) { return d <= vector_dim ? d : d + 1; };
  Layout layout;
  layout.splits.assign(rank, 1);
  layout.splits[vector_dim] = width;
  for (int d = 0; d < rank; ++d) {
    if (d == vector_dim) continue;
    if (d == reduction_dim) layout.permutation.push_back(vector_dim);
    layout.permutation.push_back(split_index(d));
  }
  layout.permutation.push_back(vector_dim + 1);
  return layout;
}

absl::Status PackOperands(TracedSchedule* schedule, const TiledNest& nest) {
  const BlockNode* node = schedule->program().FindBlock(nest.block_name);
  if (node == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("pack_operand: no block \"", nest.block_name, "\""));
  }
  std::vector<PackCandidate> candidates;
  const std::vector<const Buffer*> order = ReadOrder(*node);
  for (const BufferAccess& read : AccessesOf(*node).reads) {
    const Buffer* buffer = read.buffer.get();
    if (std::find(order.begin(), order.end(), buffer) == order.end())
      continue;  // written
    if (std::any_of(
            candidates.begin(), candidates.end(),
            [&](const PackCandidate& c) { return c.buffer == buffer; })) {
      continue;
    }
    std::optional<Layout> layout = PackLayoutFor(*node, read, nest.plan);
    if (!layout.has_value()) continue;
    PackCandidate c;
    c.buffer = buffer;
    c.name = buffer->name;
    c.layout = *layout;
    const Expr& outer_var = node->iter_vars[nest.plan.outer_iter].var;
    c.layout_free = schedule->program().IsLayoutFreeInput(buffer);
    c.at_outer_loop =
        !c.layout_free && std::any_of(read.indices.begin(), read.indices.end(),
                                      [&](const Expr& index) {
                                        return UsesVar(index, outer_var);
                                      });
    c.last_dim_last =
        layout->permutation.back() == static_cast<int64_t>(read.indices.size());
    c.rank = static_cast<int>(read.indices.size());
    for (int d = 0; d < c.rank; ++d) {
      if (layout->splits[d] > 1) c.vector_dim = d, c.panel = layout->splits[d];
    }
    candidates.push_back(std::move(c));
  }

  for (const PackCandidate& c : candidates) {
    // The read index in the block as it is now (earlier packs replaced
    // their buffers by caches).
    node = schedule->program().FindBlock(nest.block_name);
    const std::vector<const Buffer*> now = ReadOrder(*node);
    auto it = std::find_if(now.begin(), now.end(),
                           [&](const Buffer* b) { return b->name == c.name; });
    if (it == now.end()) {
      return absl::InternalError(
          absl::StrCat("pack_operand: block \"", nest.block_name,
                       "\" no longer reads \"", c.name, "\""));
    }
    LATHE_ASSIGN_OR_RETURN(
        BlockRV pack,
        schedule->CacheRead(nest.block, it - now.begin(), "global", c.layout));
    if (c.at_outer_loop) {
      LATHE_RETURN_IF_ERROR(schedule->ComputeAt(pack, nest.parallel_loop,
                                                /*preserve_unit_loops=*/true));
    }
    // Placed on purpose (block_nest.h): RandomComputeLocation leaves it.
    LATHE_RETURN_IF_ERROR(
        schedule->AnnotateBlock(pack, kPlacedAnnotation, int64_t{1}));
    if (c.layout_free) {
      LATHE_RETURN_IF_ERROR(
          schedule->AnnotateBlock(pack, kLayoutFreePackAnnotation, int64_t{1}));
    }
    if (c.last_dim_last) {
      LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops,
                             schedule->GetLoops(pack));
      LATHE_RETURN_IF_ERROR(schedule->Vectorize(loops.back()));
    } else if (c.vector_dim >= 0) {
      LATHE_RETURN_IF_ERROR(StorePanelsInOrder(schedule, pack, c));
    }
  }
  return absl::OkStatus();
}

}  // namespace lathe::tuner
