// ForkSchedule (schedule_rule.h).
// Tests: tests/tuner/space/schedule_rule_test.cc.
#include "tuner/space/schedule_rule.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/schedule/replay.h"

namespace lathe::tuner {

absl::StatusOr<std::unique_ptr<TracedSchedule>> ForkSchedule(
    const TracedSchedule& schedule, const Program& initial) {
  const Trace& trace = schedule.trace();
  // Replay numbers random variables in the order the instructions create
  // them, as the original schedule did, so handles carry over. The copy's
  // own random stream is seeded from the trace: forks of equal schedules
  // sample alike (determinism), forks of different ones differently.
  const uint64_t seed = StableHash64(trace.ToText());
  absl::StatusOr<std::unique_ptr<TracedSchedule>> copy =
      ReplayTrace(trace, initial, trace.decisions, seed);
  if (!copy.ok()) {
    // The trace was recorded on this very program: a replay failure is a bug.
    return absl::InternalError(absl::StrCat(
        "fork schedule: the trace does not replay: ", copy.status().message()));
  }
  (*copy)->mutable_trace().workload = trace.workload;
  return copy;
}

}  // namespace lathe::tuner
