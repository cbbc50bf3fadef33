// GpuBindBlock (gpu_bind_block.h).
#include "tuner/space/gpu_bind_block.h"

#include <algorithm>
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
    DefaultGpuScheduleOptions options;
    options.threads_per_block = std::min<int64_t>(
        options.threads_per_block, context.target.gpu.max_threads_per_block);
    // float32 elements
    options.max_shared_elements = std::max<int64_t>(
        1, context.target.gpu.max_shared_memory_per_block / 4);
    GpuBlockSampling sampling;
    sampling.max_threads = context.target.gpu.max_threads_per_block;
    ScheduleGpuBlock(schedule.get(), block, options, nullptr, &sampling);
  }
  out.push_back(std::move(schedule));
  return out;
}

}  // namespace lathe::tuner
