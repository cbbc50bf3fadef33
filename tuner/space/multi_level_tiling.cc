// MultiLevelTiling (multi_level_tiling.h).
// Tests: tests/tuner/space/multi_level_tiling_test.cc,
// tests/tuner/space/multi_level_tiling_property_test.cc.
#include "tuner/space/multi_level_tiling.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "compiler/arith/linear_terms.h"
#include "compiler/ir/expr_functor.h"
#include "tuner/space/block_nest.h"
#include "tuner/space/cache_write_output.h"
#include "tuner/space/compute_producer_at_tile.h"
#include "tuner/space/pack_operand.h"

namespace lathe::tuner {
namespace {

// The index of the iteration variable `var` of `block`, or -1.
int IterIndexOf(const BlockNode& block, const Expr& var) {
  for (size_t i = 0; i < block.iter_vars.size(); ++i) {
    if (block.iter_vars[i].var.same_as(var)) return static_cast<int>(i);
  }
  return -1;
}

// For each dimension of the block's only written buffer, the spatial
// iteration variable that indexes it; nullopt when the block writes several
// buffers or a dimension is not a plain spatial variable (cache_write would
// refuse it).
std::optional<std::vector<int>> OutputIters(const BlockNode& block) {
  BlockAccesses accesses = AccessesOf(block);
  if (accesses.writes.empty()) return std::nullopt;
  const BufferAccess& out = accesses.writes.front();
  for (const BufferAccess& w : accesses.writes) {
    if (w.buffer != out.buffer) return std::nullopt;
  }
  std::vector<int> iters;
  for (const Expr& index : out.indices) {
    int iter = IterIndexOf(block, index);
    if (iter < 0 || block.iter_vars[iter].type != IterType::kSpatial)
      return std::nullopt;
    iters.push_back(iter);
  }
  return iters;
}

// Whether every operand either does not use `iter` or uses it as a plain
// index of exactly one dimension (packing can then make it unit-stride).
bool PackableOrBroadcast(const BlockNode& block, int iter) {
  const Expr& var = block.iter_vars[iter].var;
  for (const BufferAccess& read : Operands(block)) {
    int uses = 0;
    for (const Expr& index : read.indices) {
      if (!UsesVar(index, var)) continue;
      ++uses;
      if (!index.same_as(var)) return false;
    }
    if (uses > 1) return false;
  }
  return true;
}

// Whether some operand reads `iter` with a step other than one (a strided
// convolution's input, `2 * q + s`): vectorized over that variable, its
// loads would be gathers.
bool ReadsStrided(const BlockNode& block, int iter) {
  const Expr& var = block.iter_vars[iter].var;
  for (const BufferAccess& read : Operands(block)) {
    for (const Expr& index : read.indices) {
      if (!UsesVar(index, var)) continue;
      LinearTerms terms;
      CollectLinearTerms(index, 1, &terms);
      for (const auto& [atom, coefficient] : terms.terms) {
        if (atom.same_as(var) && coefficient != 1 && coefficient != 0)
          return true;
        if (!atom.same_as(var) && UsesVar(atom, var)) return true;
      }
    }
  }
  return false;
}

int VectorRegisters(const Target& target) {
  return target.HasFeature("avx512f") ? 32 : 16;
}

// Fewest rows of a register tile worth sampling: with two FMA pipes of
// latency 4, 8 accumulators must be in flight (docs/kernels.md); 4 rows of two
// vectors do it.
constexpr int64_t kMinRegisterRows = 4;

// The sizes a register tile of a loop of `extent` may take: its divisors in
// [least, most]; when none is, the largest divisor up to `most` (a prime
// extent gets a thin tile rather than a tail).
std::vector<int64_t> RegisterTileSizes(int64_t extent, int64_t least,
                                       int64_t most) {
  std::vector<int64_t> sizes;
  int64_t largest = 1;
  for (int64_t d = 1; d <= std::min(extent, most); ++d) {
    if (extent % d != 0) continue;
    largest = d;
    if (d >= least) sizes.push_back(d);
  }
  if (sizes.empty()) sizes.push_back(largest);
  return sizes;
}

// Converts sampled tile factors to split factors.
std::vector<Factor> Factors(const std::vector<ExprRV>& sampled) {
  return std::vector<Factor>(sampled.begin(), sampled.end());
}

}  // namespace

std::vector<TilePlan> MultiLevelTiling::PlanTilings(
    const Program& program, const BlockNode& block,
    const Target& target) const {
  if (!block.IsReduction() || IsTiled(block) || !HasDataReuse(block)) return {};
  const std::optional<std::vector<NestLoop>> nest = OwnNest(program, block);
  if (!nest.has_value()) return {};
  std::optional<std::vector<int>> out = OutputIters(block);
  if (!out.has_value()) return {};
  auto extent = [&](int iter) { return block.iter_vars[iter].extent; };

  TilePlan base;
  base.lanes = options_.vector_lanes > 0 ? options_.vector_lanes
                                         : target.VectorLanesF32();
  const int64_t vectors = std::max<int64_t>(1, options_.vector_tile_vectors);
  base.vector_tile = base.lanes * vectors;
  const int64_t accumulators = options_.accumulator_registers > 0
                                   ? options_.accumulator_registers
                                   : VectorRegisters(target) - 4;
  base.row_tile = std::max<int64_t>(1, accumulators / vectors);

  // 1. Vector variables: the last output dimension of extent >= 2, and the
  //    transposed alternative when that one does not fill whole vectors.
  std::vector<std::pair<int, bool>> vector_choices;  // (iter, transposed)
  int contiguous_dim = -1;
  for (int d = static_cast<int>(out->size()) - 1; d >= 0 && contiguous_dim < 0;
       --d) {
    if (extent((*out)[d]) >= 2) contiguous_dim = d;
  }
  if (contiguous_dim < 0) return {};
  const int contiguous = (*out)[contiguous_dim];
  vector_choices.push_back({contiguous, false});
  if (options_.transposed_vector_branch &&
      (extent(contiguous) % base.lanes != 0 ||
       ReadsStrided(block, contiguous))) {
    for (int d = contiguous_dim - 1; d >= 0; --d) {
      const int iter = (*out)[d];
      if (extent(iter) >= base.lanes && extent(iter) % base.lanes == 0 &&
          PackableOrBroadcast(block, iter)) {
        vector_choices.push_back({iter, true});
        break;
      }
    }
  }

  // 2. Outer variables: every spatial variable of extent >= 2, in loop order.
  std::vector<int> outers;
  for (const NestLoop& loop : *nest) {
    if (loop.type == IterType::kSpatial && loop.extent >= 2)
      outers.push_back(loop.iter_index);
  }

  std::vector<TilePlan> plans;
  for (const auto& [vector_iter, transposed] : vector_choices) {
    TilePlan plan = base;
    plan.vector_iter = vector_iter;
    plan.transposed_output = transposed;
    if (options_.pack_operands) {
      plan.panel = PanelWidth(extent(vector_iter), plan);
      const std::vector<BufferAccess> operands = Operands(block);
      if (std::none_of(operands.begin(), operands.end(),
                       [&](const BufferAccess& read) {
                         return PackLayoutFor(block, read, plan).has_value();
                       })) {
        plan.panel = 0;
      }
    }
    // The row variable: the innermost other output dimension of extent >= 2.
    for (int d = static_cast<int>(out->size()) - 1; d >= 0 && plan.row_iter < 0;
         --d) {
      if ((*out)[d] != vector_iter && extent((*out)[d]) >= 2)
        plan.row_iter = (*out)[d];
    }
    for (int outer : outers) {
      plan.outer_iter = outer;
      plans.push_back(plan);
    }
  }
  return plans;
}

absl::StatusOr<TiledNest> TileBlock(TracedSchedule* schedule,
                                    const std::string& block,
                                    const TilePlan& plan) {
  const BlockNode* node = schedule->program().FindBlock(block);
  if (node == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("multi_level_tiling: no block \"", block, "\""));
  }
  std::optional<std::vector<NestLoop>> own =
      OwnNest(schedule->program(), *node);
  if (!own.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("multi_level_tiling: the loops of block \"", block,
                     "\" are not its own"));
  }
  // Copied out: the program changes under the pointers as the nest is tiled.
  struct LoopInfo {
    int iter;
    IterType type;
    int64_t extent;
  };
  std::vector<LoopInfo> infos;
  int split_reduction = -1;  // the first reduction loop of extent >= 2
  for (const NestLoop& l : *own) {
    if (split_reduction < 0 && l.type == IterType::kReduce && l.extent >= 2) {
      split_reduction = static_cast<int>(infos.size());
    }
    infos.push_back({l.iter_index, l.type, l.extent});
  }

  TiledNest nest;
  nest.block_name = block;
  nest.plan = plan;
  LATHE_ASSIGN_OR_RETURN(nest.block, schedule->GetBlock(block));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops,
                         schedule->GetLoops(nest.block));
  LATHE_CHECK(loops.size() == infos.size(),
              "multi_level_tiling: get_loops of \"", block, "\" gave ",
              loops.size(), " loops for a nest of ", infos.size());

  std::vector<LoopRV> unit_spatial, outer_rest;
  std::optional<LoopRV> outer_first, vector_loop, row_loop;
  bool reduction_split = false;
  for (size_t i = 0; i < infos.size(); ++i) {
    const LoopInfo& info = infos[i];
    if (info.type == IterType::kReduce) {
      if (static_cast<int>(i) == split_reduction) {
        LATHE_ASSIGN_OR_RETURN(
            std::vector<ExprRV> factors,
            schedule->SamplePerfectTile(loops[i], /*n=*/2,
                                        /*max_innermost=*/info.extent));
        LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> parts,
                               schedule->Split(loops[i], Factors(factors)));
        nest.reduce_outer.push_back(parts[0]);
        nest.reduce_inner.push_back(parts[1]);
        reduction_split = true;
      } else {
        (reduction_split ? nest.reduce_inner : nest.reduce_outer)
            .push_back(loops[i]);
      }
      continue;
    }
    if (info.extent < 2) {
      unit_spatial.push_back(loops[i]);
      continue;
    }
    const bool is_vector = info.iter == plan.vector_iter;
    const bool is_row = info.iter == plan.row_iter;
    LoopRV loop = loops[i];
    std::optional<LoopRV> within_panel, register_part;
    if (is_vector && plan.panel > 0) {
      // Panels first: the tiles across panels are whole panels.
      LATHE_ASSIGN_OR_RETURN(
          std::vector<LoopRV> halves,
          schedule->Split(loop, {Factor{}, Factor{plan.panel}}));
      loop = halves[0];
      within_panel = halves[1];
    }
    if (is_vector || is_row) {
      // The register tile: a sampled choice among the sizes that keep the
      // accumulator in registers (whole vectors, or at least 4 rows).
      const int64_t extent_below =
          within_panel.has_value() ? plan.panel : info.extent;
      const std::vector<int64_t> sizes =
          is_vector
              ? RegisterTileSizes(extent_below, plan.lanes, plan.vector_tile)
              : RegisterTileSizes(extent_below, kMinRegisterRows,
                                  plan.row_tile);
      Factor size = Factor{sizes.front()};
      if (sizes.size() > 1) {
        LATHE_ASSIGN_OR_RETURN(
            ExprRV sampled, schedule->SampleCategorical(
                                sizes, std::vector<double>(sizes.size(), 1.0)));
        size = sampled;
      }
      LATHE_ASSIGN_OR_RETURN(
          std::vector<LoopRV> parts,
          schedule->Split(within_panel.value_or(loop), {Factor{}, size}));
      if (within_panel.has_value()) {
        within_panel = parts[0];
      } else {
        loop = parts[0];
      }
      register_part = parts[1];
    }
    // Outer, middle and inner levels (across panels for a packed vector
    // variable).
    LATHE_ASSIGN_OR_RETURN(
        std::vector<ExprRV> factors,
        schedule->SamplePerfectTile(loop, /*n=*/3,
                                    /*max_innermost=*/info.extent));
    LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> parts,
                           schedule->Split(loop, Factors(factors)));
    if (info.iter == plan.outer_iter) {
      outer_first = parts[0];
    } else {
      outer_rest.push_back(parts[0]);
    }
    nest.middle.push_back(parts[1]);
    nest.inner.push_back(parts[2]);
    if (within_panel.has_value()) nest.inner.push_back(*within_panel);
    if (is_vector) vector_loop = register_part;
    if (is_row) row_loop = register_part;
  }
  if (!outer_first.has_value() || !vector_loop.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("multi_level_tiling: block \"", block,
                     "\" lacks the planned outer or vector loop"));
  }
  nest.parallel_loop = *outer_first;
  nest.vector_loop = *vector_loop;
  nest.row_loop = row_loop;
  nest.outer = unit_spatial;
  nest.outer.push_back(*outer_first);
  nest.outer.insert(nest.outer.end(), outer_rest.begin(), outer_rest.end());
  if (row_loop.has_value()) nest.registers.push_back(*row_loop);
  nest.registers.push_back(*vector_loop);

  std::vector<LoopRV> order;
  for (const std::vector<LoopRV>* level :
       {&nest.outer, &nest.middle, &nest.reduce_outer, &nest.inner,
        &nest.reduce_inner, &nest.registers}) {
    order.insert(order.end(), level->begin(), level->end());
  }
  LATHE_RETURN_IF_ERROR(schedule->Reorder(order));
  return nest;
}

namespace {

// Steps 1-4 of one branch (multi_level_tiling.h) on `schedule`, with the
// producer chain computed at the outer tile when there is one.
absl::Status BuildBranch(TracedSchedule* schedule, const std::string& block,
                         const TilePlan& plan, bool pack_operands,
                         const std::optional<ProducerChain>& chain) {
  LATHE_ASSIGN_OR_RETURN(TiledNest nest, TileBlock(schedule, block, plan));
  LATHE_RETURN_IF_ERROR(CacheWriteOutput(schedule, nest).status());
  if (pack_operands) LATHE_RETURN_IF_ERROR(PackOperands(schedule, nest));
  LATHE_RETURN_IF_ERROR(schedule->Parallel(nest.parallel_loop));
  // After the parallel loop is marked, so that compute_at refuses a move
  // whose copies would write the same elements in two of its iterations.
  if (chain.has_value())
    LATHE_RETURN_IF_ERROR(ComputeProducerAtTile(schedule, nest, *chain));
  if (nest.row_loop.has_value())
    LATHE_RETURN_IF_ERROR(schedule->Unroll(*nest.row_loop));
  LATHE_RETURN_IF_ERROR(schedule->Vectorize(nest.vector_loop));
  return schedule->AnnotateBlock(nest.block, kTiledAnnotation, int64_t{1});
}

}  // namespace

absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>>
MultiLevelTiling::Apply(std::unique_ptr<TracedSchedule> schedule,
                        const std::string& block,
                        const SpaceContext& context) const {
  std::vector<std::unique_ptr<TracedSchedule>> result;
  const BlockNode* node = schedule->program().FindBlock(block);
  std::vector<TilePlan> plans;
  std::optional<ProducerChain> chain;
  if (node != nullptr) {
    plans = PlanTilings(schedule->program(), *node, context.target);
    if (!plans.empty()) chain = ProducerChainOf(schedule->program(), *node);
  }
  for (const TilePlan& plan : plans) {
    LATHE_ASSIGN_OR_RETURN(std::unique_ptr<TracedSchedule> branch,
                           ForkSchedule(*schedule, *context.initial));
    // A refusal drops the branch: the plan's checks are heuristics over the
    // block, the primitives the authority on what applies. A branch whose
    // producer chain cannot move is built again without it.
    if (chain.has_value()) {
      if (BuildBranch(branch.get(), block, plan, options_.pack_operands, chain)
              .ok()) {
        result.push_back(std::move(branch));
        continue;
      }
      LATHE_ASSIGN_OR_RETURN(branch, ForkSchedule(*schedule, *context.initial));
    }
    if (BuildBranch(branch.get(), block, plan, options_.pack_operands,
                    std::nullopt)
            .ok()) {
      result.push_back(std::move(branch));
    }
  }
  if (result.empty()) result.push_back(std::move(schedule));
  return result;
}

}  // namespace lathe::tuner
