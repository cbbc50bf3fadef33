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

// Replays SampleTrace makes at most by default: enough that a space of
// which a third of the points replay (a GPU tile of a large GEMM) almost
// never fails to give one (0.67^32 < 1e-5); a failed replay stops at the
// primitive that refuses, so the attempts cost less than as many points.
inline constexpr int kSampleAttempts = 32;

absl::StatusOr<std::unique_ptr<TracedSchedule>> ReplayTrace(
    const Trace& trace, const Program& program, const Decisions& decisions,
    uint64_t seed = 0);

// Samples a point of the space `trace` records that replays: rejection
// sampling. The first attempt is ReplayTrace(trace, program, decisions,
// seed), so a seed whose point replays gives that point, and every point
// that replays is reachable, with its probability among the points that
// replay unchanged; when a primitive fails after a decision was drawn, the
// decisions `decisions` lacks are all drawn again from the next seed of a
// stream forked from `seed`, up to `max_attempts` replays in all (the
// decisions of a point may depend on each other: a copy's vector width on
// its tile). Decisions in `decisions` are never changed: a point whose
// given decisions do not fit is refused at the first attempt. `attempts`,
// when given, receives the number of replays made. Errors: the last
// attempt's.
absl::StatusOr<std::unique_ptr<TracedSchedule>> SampleTrace(
    const Trace& trace, const Program& program, const Decisions& decisions,
    uint64_t seed, int max_attempts = kSampleAttempts, int* attempts = nullptr);

// Replays with the trace's own decisions.
absl::StatusOr<std::unique_ptr<TracedSchedule>> ReplayTrace(
    const Trace& trace, const Program& program);

}  // namespace lathe
