// GpuBindBlock: the schedule rule that gives every block of a GPU design
// space that no other rule scheduled the default GPU schedule's strategy
// (compiler/schedule/default_gpu_schedule.h, step 2: a cross-thread
// reduction, a fixed shared-memory or register tile, or its spatial loops
// bound to blocks and threads), so that every point of the space runs on a
// GPU, with its choices sampled (GpuBlockSampling, threads up to the
// target's max-threads-per-block): the threads per block of a plain
// binding, the threads that share a cross-thread reduction, the unroll
// depth of a thread's serial reduction. The fixed register and
// shared-memory tiles sample nothing. It never branches.
//
// Applies to a block of a cuda target whose loops are its own and that no
// loop bound to a thread or block encloses (the caches and inits the tiling
// rule made are left alone).
// Tests: tests/tuner/space/gpu_bind_block_test.cc.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tuner/space/schedule_rule.h"

namespace lathe::tuner {

class GpuBindBlock : public ScheduleRule {
 public:
  std::string Name() const override { return "gpu_bind_block"; }
  absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>> Apply(
      std::unique_ptr<TracedSchedule> schedule, const std::string& block,
      const SpaceContext& context) const override;
};

}  // namespace lathe::tuner
