// GpuSharedTiling (gpu_shared_tiling.h).
#include "tuner/space/gpu_shared_tiling.h"

#include <utility>

#include "base/status_macros.h"
#include "compiler/schedule/gpu_shared_tile.h"
#include "tuner/space/block_nest.h"

namespace lathe::tuner {
namespace {

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
// spatial loop of more than one iteration tiled.
absl::StatusOr<SharedTileFactors> SampleFactors(ConcreteSchedule* sch,
                                                const SharedTileLoops& loops) {
  SharedTileFactors f;
  f.axes.resize(loops.spatial.size());
  for (size_t d = 0; d < loops.spatial.size(); ++d) {
    if (loops.spatial_extents[d] == 1) continue;
    LATHE_ASSIGN_OR_RETURN(
        std::vector<ExprRV> tile,
        sch->SamplePerfectTile(loops.spatial[d], 3,
                               GpuSharedTiling::kMaxRegistersPerAxis));
    LATHE_ASSIGN_OR_RETURN(ExprRV groups,
                           sch->SampleCategorical({1, 2}, {1, 1}));
    f.axes[d] = SharedTileAxis{tile[1], tile[2], groups};
  }
  LATHE_ASSIGN_OR_RETURN(std::vector<ExprRV> k,
                         sch->SamplePerfectTile(loops.reduce.front(), 2,
                                                GpuSharedTiling::kMaxKChunk));
  f.k_chunk = k[1];
  LATHE_ASSIGN_OR_RETURN(ExprRV lanes,
                         sch->SampleCategorical({1, 2, 4}, {1, 1, 1}));
  f.lanes = lanes;
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
  for (int attempt = 0; attempt < kSamplingAttempts; ++attempt) {
    LATHE_ASSIGN_OR_RETURN(std::unique_ptr<TracedSchedule> tiled,
                           ForkSchedule(*schedule, *context.initial));
    for (int skip = 0; skip < attempt; ++skip) tiled->rng().Next();
    tiled->rng() = tiled->rng().Fork();
    if (ApplySharedTile(tiled.get(), block, /*fuse_reductions=*/false,
                        &SampleFactors)
            .ok()) {
      out.push_back(std::move(tiled));
      return out;
    }
  }
  out.push_back(std::move(schedule));
  return out;
}

}  // namespace lathe::tuner
