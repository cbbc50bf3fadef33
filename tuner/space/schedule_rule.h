// Schedule rules: how design spaces are built (docs/architecture.md, "Data flow
// of a tuning round", step 2).
//
// A rule looks at one block of a schedule under construction and applies
// schedule primitives to it, sampling what should be searched (tile sizes,
// unroll depth, compute location) with sampling instructions, so that the
// resulting trace is a design space: replaying it with other decisions gives
// other programs of the space. A rule may branch (return several schedules,
// e.g. with and without packing) or not apply (return its input unchanged).
// Each rule is its own file under tuner/space/ with its own test.
// Tests: tests/tuner/space/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"
#include "compiler/schedule/traced_schedule.h"
#include "compiler/target/target.h"
#include "compiler/workload/workload.h"

namespace lathe::tuner {

// What every rule may consult.
struct SpaceContext {
  const Workload* workload = nullptr;
  const Program* initial = nullptr;  // the workload's unscheduled program
  Target target;
};

class ScheduleRule {
 public:
  virtual ~ScheduleRule() = default;
  // Short, stable, used in logs and tests: "multi_level_tiling".
  virtual std::string Name() const = 0;
  // Applies the rule to the block named `block` of `schedule`. Returns the
  // schedules it leads to: {schedule} when the rule does not apply. An error
  // only for a bug (a primitive failing where the rule checked it applies).
  virtual absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>> Apply(
      std::unique_ptr<TracedSchedule> schedule, const std::string& block,
      const SpaceContext& context) const = 0;
};

// An independent copy of `schedule` (its trace replayed on `initial` with its
// own decisions): random variables keep their numbers, so handles taken
// from `schedule` name the same things in the copy.
absl::StatusOr<std::unique_ptr<TracedSchedule>> ForkSchedule(
    const TracedSchedule& schedule, const Program& initial);

}  // namespace lathe::tuner
