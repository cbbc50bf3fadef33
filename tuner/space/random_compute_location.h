// RandomComputeLocation: the schedule rule that searches where a producer is
// computed: at the root (a full pass of its own, before its consumers) or
// under one of its consumers' loops (only the region one iteration reads,
// while it is in cache), as MetaSchedule's rule of the same name.
//
// It applies to a block that
// - is at the root scope, alone in its top-level statement (a block already
//   placed under another's loops, such as a write-back the tiling rule moved
//   under its tile, is left where it is);
// - carries no kTiledAnnotation (a tiled block's loops are the search's
//   already) nor kPlacedAnnotation (another rule chose its place: a packed
//   operand left at the root on purpose);
// - has a consumer and at least one loop where compute_at accepts it
//   (ComputeLocations: it writes one intermediate, not an output, and its
//   readers allow it): a padding stage kept by InlineElementwise, the
//   partial results of rfactor, a packing block left at the root.
// It records sample_compute_location(block) and compute_at(block, sampled
// loop); the "stay" decision leaves the block where it is, so the space
// includes the unmoved program. The rule never branches.
// A block moved under another's loops gets new serial loops: whatever
// ParallelVectorizeUnroll did to its own nest is gone, and the loops of its
// consumer (often parallel already) run it.
// Tests: tests/tuner/space/random_compute_location_test.cc.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tuner/space/schedule_rule.h"

namespace lathe::tuner {

class RandomComputeLocation : public ScheduleRule {
 public:
  std::string Name() const override { return "random_compute_location"; }
  absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>> Apply(
      std::unique_ptr<TracedSchedule> schedule, const std::string& block,
      const SpaceContext& context) const override;
};

}  // namespace lathe::tuner
