// ComputeProducerAtTile (compute_producer_at_tile.h).
// Tests: tests/tuner/space/compute_producer_at_tile_test.cc.
#include "tuner/space/compute_producer_at_tile.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/schedule/analysis/block_motion.h"
#include "tuner/space/block_nest.h"

namespace lathe::tuner {
namespace {

// The buffer a block writes, when it writes exactly one; else null.
const Buffer* WrittenBuffer(const BlockNode& block) {
  BlockAccesses accesses = AccessesOf(block);
  if (accesses.writes.empty()) return nullptr;
  const Buffer* written = accesses.writes.front().buffer.get();
  for (const BufferAccess& w : accesses.writes) {
    if (w.buffer.get() != written) return nullptr;
  }
  return written;
}

// The only block writing `buffer`, or null (none, or several).
const BlockNode* SoleWriter(const Program& program, const Buffer* buffer) {
  const std::vector<BlockNode*> writers = WritersOf(program, buffer);
  return writers.size() == 1 ? writers.front() : nullptr;
}

// The only block that reads `buffer` and does not write it (a reduction
// reads its own accumulator), or null (none, or several).
const BlockNode* SoleReader(const Program& program, const Buffer* buffer) {
  const std::vector<BlockNode*> writers = WritersOf(program, buffer);
  const BlockNode* reader = nullptr;
  for (const BlockNode* b : ReadersOf(program, buffer)) {
    if (std::find(writers.begin(), writers.end(), b) != writers.end()) continue;
    if (reader != nullptr) return nullptr;
    reader = b;
  }
  return reader;
}

// A block at the root in a nest of its own that no rule has claimed.
bool Movable(const Program& program, const BlockNode& block) {
  return !IsTiled(block) && !IsPlaced(block) &&
         OwnNest(program, block).has_value();
}

// E of a chain: a movable element-wise stage writing one intermediate, its
// innermost loop binding the stores' last index (the lanes).
bool IsChainEpilogue(const Program& program, const BlockNode& block) {
  if (block.IsReduction() || !Movable(program, block)) return false;
  const Buffer* written = WrittenBuffer(block);
  return written != nullptr && !program.IsOutput(written) &&
         StoresEndWith(block, OwnNest(program, block)->back().iter_index);
}

// P of a chain: a movable reduction reusing data across positions whose
// lanes (the last spatial loop, binding the stores' last index) are
// independent channels, every operand read at the lane's own index (a
// depthwise convolution; not a matmul, whose A every column of a row
// reads), its spatial loops all before its reduction loops.
bool IsChainReduction(const Program& program, const BlockNode& block) {
  if (!block.IsReduction() || !HasDataReuse(block) ||
      !Movable(program, block)) {
    return false;
  }
  const std::vector<NestLoop> nest = *OwnNest(program, block);
  size_t spatial = 0;
  while (spatial < nest.size() && nest[spatial].type == IterType::kSpatial)
    ++spatial;
  if (spatial == 0 || spatial == nest.size()) return false;
  for (size_t i = spatial; i < nest.size(); ++i) {
    if (nest[i].type != IterType::kReduce) return false;
  }
  const int lanes = nest[spatial - 1].iter_index;
  if (!StoresEndWith(block, lanes)) return false;
  const Expr& lane_var = block.iter_vars[lanes].var;
  for (const BufferAccess& read : Operands(block)) {
    if (std::none_of(
            read.indices.begin(), read.indices.end(),
            [&](const Expr& index) { return index.same_as(lane_var); }))
      return false;
  }
  return true;
}

// Whether `block` reads, through element-wise blocks only, a chain's
// reduction: a walk up its producers that visits each block once (a
// workload's stages form a DAG that may share producers widely).
bool ReadsChainReductionThroughElementwise(const Program& program,
                                           const BlockNode& block) {
  std::vector<const BlockNode*> stack = {&block};
  std::set<const BlockNode*> visited = {&block};
  while (!stack.empty()) {
    const BlockNode* current = stack.back();
    stack.pop_back();
    for (const BufferAccess& read : Operands(*current)) {
      const BlockNode* writer = SoleWriter(program, read.buffer.get());
      if (writer == nullptr || !visited.insert(writer).second) continue;
      if (!writer->IsReduction()) {
        stack.push_back(writer);
      } else if (IsChainReduction(program, *writer)) {
        return true;
      }
    }
  }
  return false;
}

// Whether `block` reads `buffer` with `var` as a whole index of some
// dimension (each value of var a slice of its own).
bool ReadsSliceOf(const BlockNode& block, const Buffer* buffer,
                  const Expr& var) {
  for (const BufferAccess& read : Operands(block)) {
    if (read.buffer.get() != buffer) continue;
    for (const Expr& index : read.indices) {
      if (index.same_as(var)) return true;
    }
  }
  return false;
}

}  // namespace

std::optional<ProducerChain> ProducerChainOf(const Program& program,
                                             const BlockNode& consumer) {
  for (const BufferAccess& x : Operands(consumer)) {
    const Buffer* x_buffer = x.buffer.get();
    const BlockNode* e = SoleWriter(program, x_buffer);
    if (e == nullptr || !IsChainEpilogue(program, *e) ||
        SoleReader(program, x_buffer) != &consumer) {
      continue;
    }
    for (const BufferAccess& y : Operands(*e)) {
      const Buffer* y_buffer = y.buffer.get();
      const BlockNode* p = SoleWriter(program, y_buffer);
      if (p == nullptr || program.IsOutput(y_buffer) ||
          WrittenBuffer(*p) != y_buffer || !IsChainReduction(program, *p) ||
          SoleReader(program, y_buffer) != e) {
        continue;
      }
      return ProducerChain{e->name, p->name};
    }
  }
  return std::nullopt;
}

bool IsEpilogueBetweenReductions(const Program& program,
                                 const BlockNode& block) {
  if (!IsChainEpilogue(program, block)) return false;
  const BlockNode* reader = SoleReader(program, WrittenBuffer(block));
  return reader != nullptr && reader->IsReduction() && HasDataReuse(*reader) &&
         ReadsChainReductionThroughElementwise(program, block);
}

absl::Status ComputeProducerAtTile(TracedSchedule* schedule,
                                   const TiledNest& nest,
                                   const ProducerChain& chain) {
  if (nest.outer.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("compute_producer_at_tile: block \"", nest.block_name,
                     "\" has no outer tile loop"));
  }
  const Program& program = schedule->program();
  const BlockNode* c_node = program.FindBlock(nest.block_name);
  const BlockNode* e_node = program.FindBlock(chain.epilogue);
  const BlockNode* p_node = program.FindBlock(chain.reduction);
  if (c_node == nullptr || e_node == nullptr || p_node == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "compute_producer_at_tile: no block \"", nest.block_name, "\", \"",
        chain.epilogue, "\" or \"", chain.reduction, "\""));
  }
  // Each parallel iteration must read a slice of X of its own, whatever the
  // tile sizes: then the copies of E and P under it write disjoint elements
  // and compute_at accepts them for every decision.
  if (!ReadsSliceOf(*c_node, WrittenBuffer(*e_node),
                    c_node->iter_vars[nest.plan.outer_iter].var)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "compute_producer_at_tile: block \"", nest.block_name,
        "\" reads what \"", chain.epilogue,
        "\" writes at the same elements in every parallel iteration"));
  }
  // P's own loops, last under its location: spatial ones (positions, then
  // lanes) and then `reduce_loops` reduction loops (IsChainReduction).
  const size_t reduce_loops = static_cast<size_t>(std::count_if(
      p_node->iter_vars.begin(), p_node->iter_vars.end(),
      [](const IterVar& iv) { return iv.type == IterType::kReduce; }));
  if (reduce_loops == 0 || p_node->iter_vars.size() < reduce_loops + 2) {
    return absl::FailedPreconditionError(absl::StrCat(
        "compute_producer_at_tile: block \"", chain.reduction,
        "\" needs a position and a lane variable before its reductions"));
  }

  // 1. E at the outer tile, its lanes vectorized.
  LATHE_ASSIGN_OR_RETURN(BlockRV e, schedule->GetBlock(chain.epilogue));
  LATHE_RETURN_IF_ERROR(schedule->ComputeAt(e, nest.outer.back(),
                                            /*preserve_unit_loops=*/true));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> e_loops, schedule->GetLoops(e));
  if (e_loops.size() < 2) {
    return absl::FailedPreconditionError(
        absl::StrCat("compute_producer_at_tile: block \"", chain.epilogue,
                     "\" has no position loop above its lanes"));
  }
  LATHE_RETURN_IF_ERROR(schedule->Vectorize(e_loops.back()));
  LATHE_RETURN_IF_ERROR(
      schedule->AnnotateBlock(e, kPlacedAnnotation, int64_t{1}));

  // 2. P at a few of E's positions: taps outside, positions unrolled, lanes
  //    inside.
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> position_parts,
                         schedule->Split(e_loops[e_loops.size() - 2],
                                         {Factor{}, Factor{kFusedPositions}}));
  LATHE_ASSIGN_OR_RETURN(BlockRV p, schedule->GetBlock(chain.reduction));
  LATHE_RETURN_IF_ERROR(schedule->ComputeAt(p, position_parts[0],
                                            /*preserve_unit_loops=*/true));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> p_loops, schedule->GetLoops(p));
  const size_t n = p_loops.size();  // preserve_unit_loops: at least p's own
  const LoopRV lanes = p_loops[n - reduce_loops - 1];
  const LoopRV positions = p_loops[n - reduce_loops - 2];
  std::vector<LoopRV> order(p_loops.end() - reduce_loops, p_loops.end());
  order.push_back(positions);
  order.push_back(lanes);
  LATHE_RETURN_IF_ERROR(schedule->Reorder(order));
  LATHE_ASSIGN_OR_RETURN(BlockRV init,
                         schedule->DecomposeReduction(p, order.front()));
  LATHE_RETURN_IF_ERROR(schedule->Unroll(positions));
  LATHE_RETURN_IF_ERROR(schedule->Vectorize(lanes));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> init_loops,
                         schedule->GetLoops(init));
  LATHE_RETURN_IF_ERROR(schedule->Vectorize(init_loops.back()));
  return schedule->AnnotateBlock(p, kPlacedAnnotation, int64_t{1});
}

}  // namespace lathe::tuner
