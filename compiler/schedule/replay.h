// Replaying traces: rebuild a program from a workload's initial program and
// a trace.
//
// Each instruction is dispatched by kind to the schedule (the registry of
// kinds: instruction_kind.h). Sampling instructions take their decision from
// `decisions` when it has one for their index and sample a fresh one from the
// seed otherwise; so a trace replays to the identical program with its own
// decisions, to another program of the same space with other decisions, and
// samples the space with none. An invalid decision, an unknown instruction
// kind or a primitive whose preconditions fail gives an error naming the
// instruction (its index and text).
// Tests: tests/compiler/schedule/instruction_kind_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/schedule/traced_schedule.h"

namespace lathe {

using Decisions = std::map<int64_t, std::vector<int64_t>>;

absl::StatusOr<std::unique_ptr<TracedSchedule>> ReplayTrace(
    const Trace& trace, const Program& program, const Decisions& decisions,
    uint64_t seed = 0);

// Replays with the trace's own decisions.
absl::StatusOr<std::unique_ptr<TracedSchedule>> ReplayTrace(
    const Trace& trace, const Program& program);

}  // namespace lathe
