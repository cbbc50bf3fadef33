// Measuring a batch in rounds: each round times every candidate of the batch
// that has measured OK so far, one after another, and a candidate's samples
// from all rounds make one result. The rounds of one candidate are a batch's
// length apart, so a slow spell of the machine does not decide its label.
//
// Why: on shared VMs the memory system has slow spells of a second or more
// (a neighbour's traffic), in which a kernel runs slower throughout; a short
// measurement that falls into one carries it in every sample, fastest
// included. Rounds make separate measurements of a batch order its pairs
// alike far more often, and the cost model's accuracy on the search's late
// batches rises with them (bench/README.md, "Why the code is as it is").
// Each round after the first costs a warm-up, repeats rounded up and lookups in
// the worker's caches (the JIT's, and its record of the reference checks
// passed: a later round does not check again).
// Tests: tests/tuner/search/measurement_rounds_test.cc.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/measure.pb.h"
#include "proto/trace.pb.h"
#include "tuner/search/task.h"

namespace lathe::tuner {

// The most rounds a tuning run may ask for (`lathe tune`, a job's spec).
inline constexpr int kMaxMeasureRounds = 8;

// What one round of `rounds` asks of a candidate, from the settings of the
// whole measurement: the time split evenly, the repeats rounded up so that
// the rounds together take at least `min_repeats` (and at least one each).
struct RoundSettings {
  double min_time_s = 0;
  int min_repeats = 1;
  int max_repeats = 1;
};
RoundSettings SettingsOfRound(double min_time_s, int min_repeats,
                              int max_repeats, int rounds);

// How many of the candidates after it in its round a request names for
// building ahead (MeasureRequest.build_ahead), when one runner measures the
// round: enough to keep a builder busy while the measuring thread times the
// current one and builds what it can itself.
inline constexpr int kBuildAheadHints = 4;

// The candidates the request of order[k] names for building ahead: the next
// kBuildAheadHints of `order` (a round's, from CandidatesOfRound), soonest
// first. Only for a round measured in order by one runner: with several
// side by side, the next candidate may go to another.
std::vector<size_t> BuildAheadOf(const std::vector<size_t>& order, size_t k);

// The request of one round for a program of `task`, all but its trace (the
// caller's to set). Every request checks against the same inputs (seed 1).
proto::MeasureRequest RequestOfRound(const Task& task,
                                     const RoundSettings& settings,
                                     bool flush_cache);

// The candidates round `round` (from 0) measures, in order: those of
// `measured_ok`, forwards in even rounds and backwards in odd ones, so that
// no candidate is always measured first after the search (or last).
std::vector<size_t> OrderOfRound(const std::vector<size_t>& measured_ok,
                                 int round);

// A later round measures only the candidates whose fastest sample so far
// is within this factor of the batch's fastest: the rounds are there so that
// a slow spell of the machine (5-15%) does not decide which of close
// programs is faster, and no spell makes a program twice as slow. A program
// further behind keeps the label of its first round: timing such programs
// again cost a tuning run tens of seconds for nothing (bench/README.md, "Why
// the code is as it is").
inline constexpr double kLaterRoundsWithin = 2.0;

// The candidates of a batch that round `round` measures, in OrderOfRound's
// order, from what the earlier rounds gave (`results[i]` for candidate i,
// empty when not measured): every candidate in round 0, then those whose
// results so far are OK and whose fastest sample is within `within` times
// the fastest of them all (<= 0: every OK one). The tuner and bench_tune's
// re-measurement both measure a batch by it.
std::vector<size_t> CandidatesOfRound(
    const std::vector<std::optional<proto::MeasureResult>>& results, int round,
    double within = kLaterRoundsWithin);

// Adds the result of a later round (`round`, from 1) of the same candidate to
// `into`, which measured OK: its samples, run and check time when it measured
// OK too; otherwise `into` becomes that failure, its error prefixed with the
// round ("round 2: timed out after ..."): a program that fails once is not
// trusted with the times of the rounds it passed.
void MergeRound(const proto::MeasureResult& later, int round,
                proto::MeasureResult* into);

// Measures a batch of programs of `task` as the tuner's one measurer does:
// `rounds` rounds (CandidatesOfRound), one request at a time (RequestOfRound
// with the program's trace, and the next ones of the round for building
// ahead when `build_ahead`), each later round merged into the first
// (MergeRound). `traces[i]` null: program i is not measured (its result
// stays empty). For benchmarks that measure a run's batches again; the
// tuner's own loop adds measurers side by side, stopping and progress. An
// error only when `measure` returns one.
absl::StatusOr<std::vector<std::optional<proto::MeasureResult>>>
MeasureBatchInRounds(const Task& task,
                     const std::vector<const proto::Trace*>& traces,
                     const RoundSettings& settings, int rounds,
                     bool flush_cache, bool build_ahead,
                     const std::function<absl::StatusOr<proto::MeasureResult>(
                         const proto::MeasureRequest&)>& measure);

}  // namespace lathe::tuner
