// GpuBindBlock (gpu_bind_block.h).
#include "tuner/space/gpu_bind_block.h"

#include <utility>

#include "compiler/schedule/default_gpu_schedule.h"

namespace lathe::tuner {

absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>>
GpuBindBlock::Apply(std::unique_ptr<TracedSchedule> schedule,
                    const std::string& block,
                    const SpaceContext& context) const {
  std::vector<std::unique_ptr<TracedSchedule>> out;
  const BlockNode* node = schedule->program().FindBlock(block);
  bool bound = false;
  if (node != nullptr) {
    for (const ForNode* loop : schedule->program().LoopsAbove(node))
      bound |= loop->for_kind == ForKind::kThreadBinding;
  }
  if (context.target.IsCuda() && node != nullptr && !bound) {
    const DefaultGpuScheduleOptions options = DefaultGpuScheduleOptionsFor(
        context.target.gpu.max_threads_per_block,
        context.target.gpu.max_shared_memory_per_block);
    GpuBlockSampling sampling;
    sampling.max_threads = context.target.gpu.max_threads_per_block;
    ScheduleGpuBlock(schedule.get(), block, options, nullptr, &sampling);
  }
  out.push_back(std::move(schedule));
  return out;
}

}  // namespace lathe::tuner
