// The default schedule (strategy in default_schedule.h).
// Tests: tests/compiler/schedule/default_schedule_test.cc.
#include "compiler/schedule/default_schedule.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/analysis/reused_stage.h"
#include "compiler/schedule/primitive/compute_inline.h"
#include "compiler/schedule/traced_schedule.h"

namespace lathe {
namespace {

// How a loop is cut for an inner part of about `target` iterations.
struct TileChoice {
  bool split = false;  // false: the whole loop is the inner part
  int64_t inner = 1;   // the inner factor when split
};

int64_t LargestDivisorAtMost(int64_t n, int64_t bound) {
  for (int64_t d = std::min(n, bound); d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

// The inner part of a loop of `extent` for a target of `target`: the whole
// loop below `whole_below`, the target when it divides, a divisor of at
// least half the target (no tail), else the target with a tail predicate (a
// prime extent would otherwise leave an inner loop of 1).
TileChoice ChooseInner(int64_t extent, int64_t target, int64_t whole_below) {
  if (extent <= target || (extent < whole_below && extent % target != 0)) {
    return {/*split=*/false, extent};
  }
  if (extent % target == 0) return {/*split=*/true, target};
  const int64_t divisor = LargestDivisorAtMost(extent, target);
  if (2 * divisor >= target) return {/*split=*/true, divisor};
  return {/*split=*/true, target};
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// One loop of a block's own nest.
struct OwnLoop {
  LoopRV rv;
  int64_t extent = 1;
  IterType type = IterType::kSpatial;
};

class DefaultScheduler {
 public:
  DefaultScheduler(TracedSchedule* sch, const DefaultScheduleOptions& options,
                   std::vector<std::string>* skipped)
      : sch_(sch), options_(options), skipped_(skipped) {}

  // Step 1 of the strategy.
  void InlineElementwise();
  // Step 2, for one block present in the program.
  void ScheduleBlock(const std::string& name);

 private:
  const Program& program() const { return sch_->program(); }
  std::string Name(LoopRV loop) const { return sch_->LoopName(loop).value(); }
  int64_t Extent(LoopRV loop) const {
    return program().FindLoop(Name(loop))->extent;
  }
  // Keeps `status` and, when it is an error, notes the refusal.
  bool Note(const absl::Status& status, const std::string& what,
            const std::string& block) {
    if (!status.ok() && skipped_ != nullptr) {
      skipped_->push_back(
          absl::StrCat(what, " of block ", block, ": ", status.message()));
    }
    return status.ok();
  }
  absl::StatusOr<BlockRV> AccumulateUnderTile(const std::string& name,
                                              BlockRV block, LoopRV tile);
  void VectorizeBelowTile(BlockRV block, const std::set<std::string>& tile);

  TracedSchedule* sch_;
  const DefaultScheduleOptions& options_;
  std::vector<std::string>* skipped_;
};

// A padding stage whose values some reader uses again and again: a reader
// with an iteration variable that its reads of the stage's buffer do not use
// (conv2d's output channels). Inlined, its select and guarded load would run
// for every value of that variable, and they keep the reader's inner loop
// from vectorizing; a padded copy made once costs one pass. (Pooling reads
// each padded element about R*S/stride^2 times: inlined, it is faster.)
bool IsReusedPaddingStage(const Program& program, const BlockNode& block) {
  return IsReusedStage(program, block, HasGuardedLoad, UnitIterVars::kCount);
}

void DefaultScheduler::InlineElementwise() {
  // Each candidate is tried on a copy of the program first, so that a block
  // that stays leaves no get_block in the trace. Names are read up front:
  // inlining removes blocks.
  using InlineFn = absl::Status (*)(Program*, const std::string&);
  const std::pair<InlineFn, bool> passes[] = {
      {&primitive::ComputeInline, /*reverse=*/false},
      {&primitive::ReverseComputeInline, /*reverse=*/true}};
  for (const auto& [fn, reverse] : passes) {
    std::vector<std::string> names;
    for (const BlockNode* b : program().Blocks()) {
      if (!b->IsReduction()) names.push_back(b->name);
    }
    for (const std::string& name : names) {
      const BlockNode* node = program().FindBlock(name);
      if (node == nullptr) continue;
      if (!reverse && IsReusedPaddingStage(program(), *node)) continue;
      Program copy = program();
      if (!fn(&copy, name).ok()) continue;
      absl::StatusOr<BlockRV> block = sch_->GetBlock(name);
      if (!block.ok()) continue;
      Note(reverse ? sch_->ReverseComputeInline(*block)
                   : sch_->ComputeInline(*block),
           reverse ? "reverse_compute_inline" : "compute_inline", name);
    }
  }
}

// The extents and iteration types of the loops above the block, when the
// nest is the block's own: one loop per iteration variable, each iteration
// variable bound to exactly one loop variable (the shape of every stage of
// an initial program). Anything else is left alone.
std::optional<std::vector<OwnLoop>> OwnLoops(const Program& program,
                                             const BlockNode& block) {
  std::vector<ForNode*> loops = program.LoopsAbove(&block);
  if (loops.empty() || loops.size() != block.iter_vars.size()) {
    return std::nullopt;
  }
  std::vector<OwnLoop> result;
  for (const ForNode* loop : loops) {
    int bound = 0;
    IterType type = IterType::kSpatial;
    for (size_t i = 0; i < block.iter_vars.size(); ++i) {
      if (block.iter_values[i].same_as(loop->var)) {
        ++bound;
        type = block.iter_vars[i].type;
      }
    }
    if (bound != 1) return std::nullopt;
    result.push_back({LoopRV{}, loop->extent, type});
  }
  return result;
}

// Step 2c on any schedule: cache_write(local), element-wise consumers folded
// into the write-back, the write-back moved under `tile`.
absl::StatusOr<BlockRV> AccumulateLocally(ConcreteSchedule* sch, BlockRV block,
                                          LoopRV tile) {
  LATHE_ASSIGN_OR_RETURN(BlockRV write_back,
                         sch->CacheWrite(block, 0, "local"));
  LATHE_ASSIGN_OR_RETURN(std::vector<BlockRV> consumers,
                         sch->GetConsumers(write_back));
  for (BlockRV consumer : consumers) {
    const BlockNode* node =
        sch->program().FindBlock(sch->BlockName(consumer).value());
    // A consumer that does not fold stays a stage of its own: not an error.
    if (node != nullptr && !node->IsReduction()) {
      sch->ReverseComputeInline(consumer).IgnoreError();
    }
  }
  LATHE_RETURN_IF_ERROR(sch->ReverseComputeAt(write_back, tile));
  return write_back;
}

absl::StatusOr<BlockRV> DefaultScheduler::AccumulateUnderTile(
    const std::string& name, BlockRV block, LoopRV tile) {
  // Dry run on a scratch schedule (untraced), the handles found by name: the
  // group goes into the trace only when all of it applies.
  {
    ConcreteSchedule scratch(program());
    LATHE_ASSIGN_OR_RETURN(BlockRV scratch_block, scratch.GetBlock(name));
    LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops,
                           scratch.GetLoops(scratch_block));
    const std::string tile_name = Name(tile);
    auto it = std::find_if(loops.begin(), loops.end(), [&](LoopRV l) {
      return scratch.LoopName(l).value() == tile_name;
    });
    LATHE_CHECK(it != loops.end(), "default schedule: tile loop ", tile_name,
                " is not above block ", name);
    LATHE_RETURN_IF_ERROR(
        AccumulateLocally(&scratch, scratch_block, *it).status());
  }
  return AccumulateLocally(sch_, block, tile);
}

// Step 2f for the init and write-back blocks: their loops below the tile
// (those not named in `tile`, inside the last one that is) get the innermost
// vectorized and the one above unrolled when it is a register-sized loop.
void DefaultScheduler::VectorizeBelowTile(BlockRV block,
                                          const std::set<std::string>& tile) {
  const std::string name = sch_->BlockName(block).value();
  std::vector<ForNode*> nest = program().LoopsAbove(program().FindBlock(name));
  size_t first_below = 0;
  for (size_t i = 0; i < nest.size(); ++i) {
    if (tile.count(nest[i]->var->name) > 0) first_below = i + 1;
  }
  if (first_below >= nest.size()) return;
  absl::StatusOr<std::vector<LoopRV>> loops = sch_->GetLoops(block);
  if (!loops.ok() || loops->size() != nest.size()) return;
  const size_t n = loops->size();
  Note(sch_->Vectorize((*loops)[n - 1]),
       absl::StrCat("vectorize(", Name((*loops)[n - 1]), ")"), name);
  if (n - first_below >= 2 &&
      Extent((*loops)[n - 2]) <= options_.register_block) {
    Note(sch_->Unroll((*loops)[n - 2]),
         absl::StrCat("unroll(", Name((*loops)[n - 2]), ")"), name);
  }
}

void DefaultScheduler::ScheduleBlock(const std::string& name) {
  const BlockNode* node = program().FindBlock(name);
  if (node == nullptr) return;
  const bool reduction = node->IsReduction();
  // a. Choose the vector loop and, for reductions, the register-block loop.
  //    Nothing is recorded before the block is known to be tileable.
  std::optional<std::vector<OwnLoop>> loops = OwnLoops(program(), *node);
  if (!loops.has_value()) {
    if (!program().LoopsAbove(node).empty()) {
      Note(absl::FailedPreconditionError("its loops are not its own"), "tiling",
           name);
    }
    return;
  }
  const int n = static_cast<int>(loops->size());
  int vec = -1;
  for (int i = n - 1; i >= 0 && vec < 0; --i) {
    if ((*loops)[i].type == IterType::kSpatial && (*loops)[i].extent >= 2)
      vec = i;
  }
  if (vec < 0) return;  // no spatial loop worth tiling: leave it as it is
  absl::StatusOr<BlockRV> block = sch_->GetBlock(name);
  if (!block.ok()) return;
  absl::StatusOr<std::vector<LoopRV>> rvs = sch_->GetLoops(*block);
  if (!rvs.ok() || static_cast<int>(rvs->size()) != n) return;
  for (int i = 0; i < n; ++i) (*loops)[i].rv = (*rvs)[i];
  int reg = -1;
  for (int i = vec - 1; reduction && i >= 0 && reg < 0; --i) {
    if ((*loops)[i].type == IterType::kSpatial && (*loops)[i].extent >= 2)
      reg = i;
  }
  const TileChoice vec_choice =
      ChooseInner((*loops)[vec].extent, options_.vector_width,
                  /*whole_below=*/2 * options_.vector_width);
  TileChoice reg_choice;
  if (reg >= 0) {
    reg_choice = ChooseInner((*loops)[reg].extent, options_.register_block,
                             /*whole_below=*/options_.register_block);
  }
  // A register block that leaves no outer loop of 2 or more iterations
  // would leave nothing to run in parallel: keep that loop outside instead.
  bool parallel_room = false;
  for (int i = 0; i < n; ++i) {
    const OwnLoop& l = (*loops)[i];
    if (l.type != IterType::kSpatial) continue;
    int64_t outer_extent = l.extent;
    if (i == vec)
      outer_extent = vec_choice.split ? CeilDiv(l.extent, vec_choice.inner) : 1;
    if (i == reg)
      outer_extent = reg_choice.split ? CeilDiv(l.extent, reg_choice.inner) : 1;
    if (outer_extent >= 2) parallel_room = true;
  }
  if (!parallel_room) reg = -1;

  //    Split, collecting the loops of the three levels.
  std::vector<LoopRV> outer, reduce, inner;
  LoopRV vec_loop, reg_loop;
  for (int i = 0; i < n; ++i) {
    const OwnLoop& l = (*loops)[i];
    if (l.type == IterType::kReduce) {
      reduce.push_back(l.rv);
      continue;
    }
    if (i != vec && i != reg) {
      outer.push_back(l.rv);
      continue;
    }
    const TileChoice& choice = i == vec ? vec_choice : reg_choice;
    LoopRV inner_loop = l.rv;
    if (choice.split) {
      const std::string what =
          absl::StrCat("split(", Name(l.rv), ", [*, ", choice.inner, "])");
      absl::StatusOr<std::vector<LoopRV>> parts =
          sch_->Split(l.rv, {Factor{}, Factor{choice.inner}});
      if (Note(parts.status(), what, name)) {
        outer.push_back((*parts)[0]);
        inner_loop = (*parts)[1];
      } else if (i == reg) {
        outer.push_back(l.rv);  // unsplit, it is just another outer loop
        continue;
      }
    }
    inner.push_back(inner_loop);
    (i == vec ? vec_loop : reg_loop) = inner_loop;
  }

  // b. Reorder to S_outer... R... S_inner, unless it already is.
  std::vector<LoopRV> order = outer;
  order.insert(order.end(), reduce.begin(), reduce.end());
  order.insert(order.end(), inner.begin(), inner.end());
  std::vector<std::string> wanted, current;
  for (LoopRV l : order) wanted.push_back(Name(l));
  for (const ForNode* l : program().LoopsAbove(program().FindBlock(name))) {
    current.push_back(l->var->name);
  }
  if (wanted != current) {
    Note(sch_->Reorder(order),
         absl::StrCat("reorder(", absl::StrJoin(wanted, ", "), ")"), name);
  }

  // c. Accumulate the tile in a local cache, written back under the tile.
  std::optional<BlockRV> write_back;
  if (reduction && !outer.empty()) {
    absl::StatusOr<BlockRV> wb =
        AccumulateUnderTile(name, *block, outer.back());
    if (Note(wb.status(),
             absl::StrCat("cache_write(local) + reverse_compute_at(",
                          Name(outer.back()), ")"),
             name)) {
      write_back = *wb;
    }
  }

  // d. The init leaves the reduction loops.
  std::optional<BlockRV> init;
  if (reduction && !reduce.empty()) {
    absl::StatusOr<BlockRV> decomposed =
        sch_->DecomposeReduction(*block, reduce.front());
    if (Note(decomposed.status(),
             absl::StrCat("decompose_reduction(", Name(reduce.front()), ")"),
             name)) {
      init = *decomposed;
    }
  }

  // e. Parallel outer tile: the outer loops fused into one. Not under a
  //    local accumulator: compact_buffers (UpdateCarriedBy) cannot yet tell
  //    that the iterations of a fused loop, whose variable reaches the
  //    indices only through // and %, write disjoint tiles; it would keep the
  //    accumulator full-size at the root instead of one tile per iteration.
  //    There the outermost outer loop of 2 or more iterations runs in
  //    parallel alone (outer loops above it have a single iteration).
  std::set<std::string> tile;
  for (LoopRV l : outer) tile.insert(Name(l));
  int64_t outer_iterations = 1;
  for (LoopRV l : outer) outer_iterations *= Extent(l);
  if (options_.num_threads != 1 && outer_iterations >= 2) {
    std::optional<LoopRV> parallel;
    if (write_back.has_value()) {
      for (LoopRV l : outer) {
        if (Extent(l) >= 2) {
          parallel = l;
          break;
        }
      }
    } else if (outer.size() >= 2) {
      absl::StatusOr<LoopRV> fused = sch_->Fuse(outer);
      if (Note(fused.status(),
               absl::StrCat("fuse(", absl::StrJoin(tile, ", "), ")"), name)) {
        parallel = *fused;
        tile.insert(Name(*fused));
      }
    }
    if (!parallel.has_value()) parallel = outer.front();
    Note(sch_->Parallel(*parallel),
         absl::StrCat("parallel(", Name(*parallel), ")"), name);
  }

  // f. Vector lanes innermost, the register block unrolled around them.
  if (vec_loop.id >= 0) {
    Note(sch_->Vectorize(vec_loop),
         absl::StrCat("vectorize(", Name(vec_loop), ")"), name);
  }
  if (reg_loop.id >= 0) {
    Note(sch_->Unroll(reg_loop), absl::StrCat("unroll(", Name(reg_loop), ")"),
         name);
  }
  if (init.has_value()) VectorizeBelowTile(*init, tile);
  if (write_back.has_value()) VectorizeBelowTile(*write_back, tile);
}

}  // namespace

absl::StatusOr<Trace> DefaultSchedule(const Program& initial,
                                      const DefaultScheduleOptions& options,
                                      std::vector<std::string>* skipped) {
  if (options.vector_width < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("default schedule: vector width ", options.vector_width,
                     " is not positive"));
  }
  if (options.register_block < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("default schedule: register block ",
                     options.register_block, " is not positive"));
  }
  if (options.num_threads < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("default schedule: thread count ", options.num_threads,
                     " is negative"));
  }
  TracedSchedule sch(initial);
  DefaultScheduler scheduler(&sch, options, skipped);
  scheduler.InlineElementwise();
  // The blocks left after inlining, named up front: scheduling adds blocks
  // (caches, inits) that are handled with the block they came from.
  std::vector<std::string> names;
  for (const BlockNode* b : sch.program().Blocks()) names.push_back(b->name);
  for (const std::string& name : names) scheduler.ScheduleBlock(name);
  return sch.trace();
}

}  // namespace lathe
