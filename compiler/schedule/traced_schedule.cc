#include "compiler/schedule/traced_schedule.h"

#include "base/status_macros.h"
namespace lathe {

void TracedSchedule::Applied(Instruction instruction,
                             std::optional<std::vector<int64_t>> decision) {
  if (decision.has_value()) {
    trace_.decisions[static_cast<int64_t>(trace_.instructions.size())] =
        *std::move(decision);
  }
  trace_.instructions.push_back(std::move(instruction));
}

}  // namespace lathe
