// Random valid schedules, for property tests.
//
// ApplyRandomSchedule draws a sequence of primitive calls on random blocks
// and loops of the schedule's current program, with random arguments (split
// factors, loop orders, cache scopes and layouts, compute locations, ...).
// Calls whose preconditions fail are simply dropped (they leave the program
// and the trace unchanged), so what remains is a valid trace exercising the
// primitives in combinations nobody wrote by hand.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "compiler/schedule/traced_schedule.h"

namespace lathe::testing {

struct RandomScheduleStats {
  std::map<std::string, int> applied;   // primitive -> successful calls
  std::map<std::string, int> rejected;  // primitive -> refused calls
};

// Attempts `attempts` random primitive calls on sch, drawing from rng.
void ApplyRandomSchedule(TracedSchedule* sch, Rng* rng, int attempts,
                         RandomScheduleStats* stats);

}  // namespace lathe::testing
