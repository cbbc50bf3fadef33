// RandomComputeLocation (random_compute_location.h).
// Tests: tests/tuner/space/random_compute_location_test.cc.
#include "tuner/space/random_compute_location.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/schedule/primitive/compute_at.h"
#include "tuner/space/block_nest.h"

namespace lathe::tuner {

absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>>
RandomComputeLocation::Apply(std::unique_ptr<TracedSchedule> schedule,
                             const std::string& block,
                             const SpaceContext& /*context*/) const {
  std::vector<std::unique_ptr<TracedSchedule>> result;
  const Program& program = schedule->program();
  const BlockNode* node = program.FindBlock(block);
  // ComputeLocations tries compute_at at every loop above a consumer, so an
  // empty list also covers "no consumer" and "writes an output".
  if (node != nullptr && !IsTiled(*node) && !IsPlaced(*node) &&
      AloneAtRoot(program, *node) && !program.LoopsAbove(node).empty() &&
      !primitive::ComputeLocations(program, block).empty()) {
    LATHE_ASSIGN_OR_RETURN(BlockRV b, schedule->GetBlock(block));
    LATHE_ASSIGN_OR_RETURN(LoopRV location, schedule->SampleComputeLocation(b));
    absl::Status moved = schedule->ComputeAt(b, location);
    if (!moved.ok()) {
      return absl::InternalError(
          absl::StrCat(Name(),
                       ": compute_at refused a location that "
                       "sample_compute_location offered "
                       "for block \"",
                       block, "\": ", moved.message()));
    }
  }
  result.push_back(std::move(schedule));
  return result;
}

}  // namespace lathe::tuner
