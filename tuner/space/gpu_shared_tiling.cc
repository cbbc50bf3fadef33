// GpuSharedTiling (gpu_shared_tiling.h).
#include "tuner/space/gpu_shared_tiling.h"

#include <iterator>
#include <optional>
#include <utility>

#include "base/status_macros.h"
#include "compiler/schedule/default_gpu_schedule.h"
#include "compiler/schedule/gpu_shared_tile.h"
#include "compiler/schedule/gpu_tile_choice.h"
#include "tuner/space/block_nest.h"

namespace lathe::tuner {
namespace {

// The copies' vector widths the space samples from.
constexpr int64_t kLanes[] = {1, 2, 4};

// A point of the space to take instead of sampling one: a ranked tile
// (gpu_tile_choice.h) with the copies' width kLanes[lanes].
struct WantedPoint {
  const TileChoice* tile = nullptr;
  int64_t lanes = 0;
};

// Whether `block` is a reduction the tile is meant for (see the header).
bool WantsSharedTile(const Program& program, const BlockNode& block) {
  if (!block.IsReduction()) return false;
  std::optional<std::vector<NestLoop>> nest = OwnNest(program, block);
  if (!nest.has_value()) return false;
  std::vector<int64_t> spatial;
  int64_t reduction = 1, outputs = 1;
  for (const NestLoop& loop : *nest) {
    if (loop.loop->for_kind != ForKind::kSerial) return false;
    if (loop.type == IterType::kSpatial) {
      spatial.push_back(loop.extent);
      outputs *= loop.extent;
    } else {
      reduction *= loop.extent;
    }
  }
  int64_t axes = 0;
  for (int64_t extent : spatial) axes += extent > 1;
  if (axes < 2 || outputs < GpuSharedTiling::kMinOutputs ||
      reduction < GpuSharedTiling::kMinReduction) {
    return false;
  }
  return outputs > GpuSharedTiling::kMaxCrossThreadOutputs ||
         reduction < GpuSharedTiling::kCrossThreadReduction;
}

// The sampled factors, from the loops ApplySharedTile hands over: every
// spatial loop of more than one iteration tiled. Then the bounds that the
// values size together, checked before any primitive uses them (a point
// past one would be refused by the code generator after its whole replay):
// a thread's register tile, the threads of a block and the block's
// registers. With `wanted`, its tile is taken as the decisions: a loop's
// registers in 2 runs when they are 8 (as the default GPU schedule makes
// them), the copies `wanted.lanes` wide.
absl::StatusOr<SharedTileFactors> SampleFactors(
    const Target& target, const TileProblem& problem, ConcreteSchedule* sch,
    const SharedTileLoops& loops, const std::optional<WantedPoint>& wanted) {
  if (wanted.has_value() &&
      (wanted->tile->threads.size() != loops.spatial.size() ||
       loops.reduce.empty())) {
    return absl::InvalidArgumentError(
        "the ranked tile does not have the block's loops");
  }
  SharedTileFactors f;
  f.axes.resize(loops.spatial.size());
  std::vector<Factor> registers, threads;
  for (size_t d = 0; d < loops.spatial.size(); ++d) {
    if (loops.spatial_extents[d] == 1) continue;
    std::optional<std::vector<int64_t>> tile_decision;
    std::optional<int64_t> groups_decision;
    if (wanted.has_value()) {
      const int64_t t = wanted->tile->threads[d];
      const int64_t r = wanted->tile->registers[d];
      const int64_t runs = r >= 8 && r % 2 == 0 ? 2 : 1;
      tile_decision = {loops.spatial_extents[d] / (t * (r / runs)), t,
                       r / runs};
      groups_decision = runs - 1;
    }
    LATHE_ASSIGN_OR_RETURN(
        std::vector<ExprRV> tile,
        sch->SamplePerfectTile(loops.spatial[d], 3,
                               GpuSharedTiling::kMaxRegistersPerAxis,
                               tile_decision));
    LATHE_ASSIGN_OR_RETURN(
        ExprRV groups, sch->SampleCategorical({1, 2}, {1, 1}, groups_decision));
    f.axes[d] = SharedTileAxis{tile[1], tile[2], groups};
    threads.push_back(tile[1]);
    registers.push_back(tile[2]);
    registers.push_back(groups);
  }
  std::optional<std::vector<int64_t>> k_decision;
  std::optional<int64_t> lanes_decision;
  if (wanted.has_value()) {
    const int64_t chunk = wanted->tile->k_chunk;
    k_decision = {loops.reduce_extents.front() / chunk, chunk};
    lanes_decision = wanted->lanes;
  }
  LATHE_ASSIGN_OR_RETURN(
      std::vector<ExprRV> k,
      sch->SamplePerfectTile(loops.reduce.front(), 2,
                             GpuSharedTiling::kMaxKChunk, k_decision));
  f.k_chunk = k[1];
  LATHE_ASSIGN_OR_RETURN(
      ExprRV lanes,
      sch->SampleCategorical({std::begin(kLanes), std::end(kLanes)}, {1, 1, 1},
                             lanes_decision));
  f.lanes = lanes;
  // The tiles' shared memory: each loop's tile as factors (a spatial loop's
  // groups x threads x registers, the chunk, the other reduction loops
  // whole), float32 elements.
  std::vector<Factor> tile_factors;
  std::vector<std::vector<int64_t>> loop_factors;
  auto add = [&](std::vector<Factor> factors) {
    loop_factors.emplace_back();
    for (Factor& factor : factors) {
      loop_factors.back().push_back(static_cast<int64_t>(tile_factors.size()));
      tile_factors.push_back(std::move(factor));
    }
  };
  for (const std::optional<SharedTileAxis>& axis : f.axes) {
    if (axis.has_value()) {
      add({axis->groups, axis->threads, axis->registers});
    } else {
      add({});
    }
  }
  add({f.k_chunk});
  for (size_t r = 1; r < loops.reduce_extents.size(); ++r)
    add({Factor{loops.reduce_extents[r]}});
  if (!registers.empty()) {
    LATHE_RETURN_IF_ERROR(sch->CheckProduct(registers, kMaxRegistersPerThread,
                                            "a thread's registers"));
    LATHE_RETURN_IF_ERROR(sch->CheckProduct(
        threads, target.gpu.max_threads_per_block, "max-threads-per-block"));
    std::vector<Factor> block_registers = threads;
    block_registers.insert(block_registers.end(), registers.begin(),
                           registers.end());
    LATHE_RETURN_IF_ERROR(sch->CheckProduct(block_registers,
                                            target.gpu.registers_per_block,
                                            "registers-per-block"));
  }
  // A lower bound on what the code generator allocates (non-affine indices
  // count 1), so that no point that fits is refused; the bound is the
  // target's shared memory (Apply sets it).
  if (loop_factors.size() == problem.spatial.size() + problem.reduce.size()) {
    LATHE_RETURN_IF_ERROR(sch->CheckFootprint(
        tile_factors,
        TileFootprintLayout(problem, loop_factors, NonAffineSpan::kOne),
        problem.max_shared_elements,
        "max-shared-memory-per-block, float32 elements"));
  }
  return f;
}

}  // namespace

absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>>
GpuSharedTiling::Apply(std::unique_ptr<TracedSchedule> schedule,
                       const std::string& block,
                       const SpaceContext& context) const {
  std::vector<std::unique_ptr<TracedSchedule>> out;
  const BlockNode* node = schedule->program().FindBlock(block);
  if (!context.target.IsCuda() || node == nullptr ||
      !WantsSharedTile(schedule->program(), *node)) {
    out.push_back(std::move(schedule));
    return out;
  }
  // On copies: a point sampled here may not fit (more threads than a tile
  // has elements to copy, a vector width its loop does not divide), and a
  // refused primitive must leave no trace. The space is the instructions,
  // the same for every point, so the first point that fits gives it;
  // the seeds are the fork's, so the space is the same every run.
  const Target& target = context.target;
  std::optional<TileProblem> problem = TileProblemOf(
      schedule->program(), *node, target.gpu.max_threads_per_block);
  if (!problem.has_value()) {
    out.push_back(std::move(schedule));
    return out;
  }
  problem->max_shared_elements =
      DefaultGpuScheduleOptionsFor(target.gpu.max_threads_per_block,
                                   target.gpu.max_shared_memory_per_block)
          .max_shared_elements;
  // The space's own point (the decisions its trace records, where the
  // search starts: evolutionary_search.h) is the best ranked tile that
  // builds, with the widest copies that fit, as the default GPU schedule
  // would choose it; a sampled point when none builds.
  for (const TileChoice& tile : RankSharedTiles(*problem, kRankedPointsTried)) {
    for (int64_t lanes = std::size(kLanes) - 1; lanes >= 0; --lanes) {
      const WantedPoint wanted{&tile, lanes};
      LATHE_ASSIGN_OR_RETURN(std::unique_ptr<TracedSchedule> tiled,
                             ForkSchedule(*schedule, *context.initial));
      if (ApplySharedTile(
              tiled.get(), block, /*fuse_reductions=*/false,
              [&](ConcreteSchedule* sch, const SharedTileLoops& loops) {
                return SampleFactors(target, *problem, sch, loops, wanted);
              })
              .ok()) {
        out.push_back(std::move(tiled));
        return out;
      }
    }
  }
  auto choose = [&target, &problem](ConcreteSchedule* sch,
                                    const SharedTileLoops& loops) {
    return SampleFactors(target, *problem, sch, loops, std::nullopt);
  };
  for (int attempt = 0; attempt < kSamplingAttempts; ++attempt) {
    LATHE_ASSIGN_OR_RETURN(std::unique_ptr<TracedSchedule> tiled,
                           ForkSchedule(*schedule, *context.initial));
    for (int skip = 0; skip < attempt; ++skip) tiled->rng().Next();
    tiled->rng() = tiled->rng().Fork();
    if (ApplySharedTile(tiled.get(), block, /*fuse_reductions=*/false, choose)
            .ok()) {
      out.push_back(std::move(tiled));
      return out;
    }
  }
  out.push_back(std::move(schedule));
  return out;
}

}  // namespace lathe::tuner
