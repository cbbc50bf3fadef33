// ComputeProducerAtTile (compute_producer_at_tile.h).
// Tests: tests/tuner/space/compute_producer_at_tile_test.cc.
#include "tuner/space/compute_producer_at_tile.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
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

// The index of the last dimension at which `block` writes its buffer, as
// the expression it writes there; null when the block writes nowhere.
const ExprNode* LastWriteIndex(const BlockNode& block) {
  BlockAccesses accesses = AccessesOf(block);
  if (accesses.writes.empty() || accesses.writes.front().indices.empty())
    return nullptr;
  return accesses.writes.front().indices.back().get();
}

// The only block writing `buffer`, or null (none, or several).
const BlockNode* WriterOf(const Program& program, const Buffer* buffer) {
  const BlockNode* writer = nullptr;
  for (const BlockNode* b : program.Blocks()) {
    if (b == program.root.get()) continue;
    for (const BufferAccess& w : AccessesOf(*b).writes) {
      if (w.buffer.get() != buffer) continue;
      if (writer != nullptr && writer != b) return nullptr;
      writer = b;
    }
  }
  return writer;
}

// Whether `reader` is the only block other than the writer that reads
// `buffer`.
bool OnlyReader(const Program& program, const Buffer* buffer,
                const BlockNode& reader) {
  for (const BlockNode* b : program.Blocks()) {
    if (b == program.root.get() || b == &reader) continue;
    for (const BufferAccess& r : Operands(*b)) {
      if (r.buffer.get() == buffer) return false;
    }
  }
  return true;
}

// A block at the root in a nest of its own that no rule has claimed.
bool Movable(const Program& program, const BlockNode& block) {
  return !IsTiled(block) && !IsPlaced(block) &&
         OwnNest(program, block).has_value();
}

// Whether the nest's loop `loop` binds the variable the block writes its
// buffer's last dimension with.
bool BindsLastWriteIndex(const BlockNode& block, const NestLoop& loop) {
  const ExprNode* last = LastWriteIndex(block);
  return last != nullptr && last == block.iter_vars[loop.iter_index].var.get();
}

// A reduction reusing data across positions whose lanes (the variable of
// its output's last index) are independent channels: every operand reads
// at the lane's own index (a depthwise convolution; not a matmul, whose A
// every column of a row reads).
bool IsChannelwiseReduction(const BlockNode& block) {
  if (!block.IsReduction() || !HasDataReuse(block)) return false;
  const ExprNode* lanes = LastWriteIndex(block);
  if (lanes == nullptr || lanes->kind != ExprKind::kVar) return false;
  for (const BufferAccess& read : Operands(block)) {
    bool indexed = false;
    for (const Expr& index : read.indices) indexed |= index.get() == lanes;
    if (!indexed) return false;
  }
  return true;
}

// P of a chain: a movable channel-wise reduction whose spatial loops all
// come before its reduction loops, the last spatial one binding the lanes.
bool IsChainReduction(const Program& program, const BlockNode& block) {
  if (!IsChannelwiseReduction(block) || !Movable(program, block)) return false;
  const std::vector<NestLoop> nest = *OwnNest(program, block);
  size_t spatial = 0;
  while (spatial < nest.size() && nest[spatial].type == IterType::kSpatial)
    ++spatial;
  if (spatial == 0 || spatial == nest.size()) return false;
  for (size_t i = spatial; i < nest.size(); ++i) {
    if (nest[i].type != IterType::kReduce) return false;
  }
  return BindsLastWriteIndex(block, nest[spatial - 1]);
}

// Whether `block` reads, through element-wise blocks only, a channel-wise
// reduction: a walk up its producers that visits each block once (a
// workload's stages form a DAG that may share producers widely).
bool ReadsReductionThroughElementwise(const Program& program,
                                      const BlockNode& block) {
  std::vector<const BlockNode*> stack = {&block};
  std::set<const BlockNode*> visited = {&block};
  while (!stack.empty()) {
    const BlockNode* current = stack.back();
    stack.pop_back();
    for (const BufferAccess& read : Operands(*current)) {
      const BlockNode* writer = WriterOf(program, read.buffer.get());
      if (writer == nullptr || !visited.insert(writer).second) continue;
      if (!writer->IsReduction()) {
        stack.push_back(writer);
      } else if (IsChannelwiseReduction(*writer)) {
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
    if (program.IsOutput(x_buffer)) continue;
    const BlockNode* e = WriterOf(program, x_buffer);
    if (e == nullptr || e == &consumer || e->IsReduction() ||
        !Movable(program, *e) || WrittenBuffer(*e) != x_buffer ||
        !OnlyReader(program, x_buffer, consumer) ||
        !BindsLastWriteIndex(*e, OwnNest(program, *e)->back())) {
      continue;
    }
    for (const BufferAccess& y : Operands(*e)) {
      const Buffer* y_buffer = y.buffer.get();
      const BlockNode* p = WriterOf(program, y_buffer);
      if (p == nullptr || program.IsOutput(y_buffer) ||
          WrittenBuffer(*p) != y_buffer || !IsChainReduction(program, *p) ||
          !OnlyReader(program, y_buffer, *e)) {
        continue;
      }
      return ProducerChain{e->name, p->name};
    }
  }
  return std::nullopt;
}

bool IsEpilogueBetweenReductions(const Program& program,
                                 const BlockNode& block) {
  if (block.IsReduction()) return false;
  const Buffer* written = WrittenBuffer(block);
  if (written == nullptr || program.IsOutput(written)) return false;
  const BlockNode* reader = nullptr;
  for (const BlockNode* b : program.Blocks()) {
    if (b == program.root.get() || b == &block) continue;
    for (const BufferAccess& r : Operands(*b)) {
      if (r.buffer.get() != written) continue;
      if (reader != nullptr && reader != b) return false;
      reader = b;
    }
  }
  if (reader == nullptr || !reader->IsReduction() || !HasDataReuse(*reader))
    return false;
  return ReadsReductionThroughElementwise(program, block);
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
  const size_t reduce_loops = static_cast<size_t>(std::count_if(
      p_node->iter_vars.begin(), p_node->iter_vars.end(),
      [](const IterVar& iv) { return iv.type == IterType::kReduce; }));
  const size_t p_iters = p_node->iter_vars.size();

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
  const size_t n = p_loops.size();
  if (reduce_loops == 0 || n < p_iters || p_iters < reduce_loops + 2) {
    return absl::FailedPreconditionError(
        absl::StrCat("compute_producer_at_tile: block \"", chain.reduction,
                     "\" has ", n, " loops for ", p_iters, " variables"));
  }
  const LoopRV lanes = p_loops[n - reduce_loops - 1];
  const LoopRV columns = p_loops[n - reduce_loops - 2];
  std::vector<LoopRV> order(p_loops.end() - reduce_loops, p_loops.end());
  order.push_back(columns);
  order.push_back(lanes);
  LATHE_RETURN_IF_ERROR(schedule->Reorder(order));
  LATHE_ASSIGN_OR_RETURN(BlockRV init,
                         schedule->DecomposeReduction(p, order.front()));
  LATHE_RETURN_IF_ERROR(schedule->Unroll(columns));
  LATHE_RETURN_IF_ERROR(schedule->Vectorize(lanes));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> init_loops,
                         schedule->GetLoops(init));
  LATHE_RETURN_IF_ERROR(schedule->Vectorize(init_loops.back()));
  return schedule->AnnotateBlock(p, kPlacedAnnotation, int64_t{1});
}

}  // namespace lathe::tuner
