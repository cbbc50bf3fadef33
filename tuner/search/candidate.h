// A candidate of the search: a point of a design space (the space's trace
// with a decision for every sampling instruction), validated by building it
// up to the lowered program, with what the cost model and the dedupe need.
// Tests: tests/tuner/search/tuner_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/schedule/replay.h"
#include "compiler/schedule/trace.h"
#include "tuner/search/task.h"

namespace lathe::tuner {

struct Candidate {
  int space = -1;  // index into Task::spaces; -1: from a record
  // Names the instructions the decisions belong to ("s<space>", or
  // "t<hash>" for a record's trace); children inherit it (the search's memo).
  std::string space_key;
  Trace trace;  // with every decision: what is measured and stored
  std::string structural_hash;  // of the scheduled program
  // Of the lowered program, i.e. of the code that runs: schedules that differ
  // only where lowering makes them equal (a split with a unit factor outer
  // or inner, a parallel loop of extent 1) have different structural hashes
  // but the same lowered hash, and measuring one measures the other.
  std::string lowered_hash;
  std::vector<float> features;
  double predicted = 0;
};

// Replays `trace` (a space, or a record's trace) with `decisions` (missing
// ones sampled from `seed`, drawn again while the point does not replay:
// SampleTrace in replay.h), lowers the program and extracts its features.
// An error when the point is invalid (a primitive's precondition fails,
// lowering fails, a cuda target's code generator refuses it, naming the
// limit): the search drops it.
absl::StatusOr<Candidate> BuildCandidate(const Task& task, int space,
                                         const Trace& trace,
                                         const Decisions& decisions,
                                         uint64_t seed);

}  // namespace lathe::tuner
