// Evolutionary search: picks the next batch of candidates of one task to
// measure (docs/architecture.md, "Data flow of a tuning round", step 3;
// MetaSchedule's search, in C++).
//
// The initial population mixes the best measured programs (warm start: from
// this run and from the database), each design space's own point (the
// decisions its trace records: a rule may choose them, as GpuSharedTiling
// takes the best ranked tile) and fresh samples of the design spaces.
// Each generation mutates parents chosen by the cost model's scores (better
// scored, more likely), validates every child by building it, and keeps the
// best. The batch is mostly the best-predicted candidates never measured,
// plus an epsilon share of fresh random samples for exploration. Until the
// model is trained, the batch is random samples and mutations of the best.
//
// Reproducible: every candidate draws from its own RNG stream, derived from
// the batch seed and its position, so a seed and the same model give the
// same batch on every machine.
// Tests: tests/tuner/search/tuner_test.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "tuner/cost_model/cost_model.h"
#include "tuner/search/candidate.h"
#include "tuner/search/mutator.h"
#include "tuner/search/task.h"

namespace lathe::tuner {

struct SearchOptions {
  int population = 128;
  int generations = 3;
  // At most this share of the initial population comes from measured programs.
  double measured_share = 0.5;
  // Share of the batch drawn at random from fresh samples.
  double epsilon = 0.1;
  // Invalid samples tolerated per valid one before giving up on a space.
  int max_invalid_per_valid = 20;
};

// A measured program the search may start from: its trace (with decisions)
// and how fast it ran.
struct Elite {
  Trace trace;
  double throughput = 0;  // higher is better
};

struct SearchStats {
  int64_t built = 0;       // candidates built (valid)
  int64_t invalid = 0;     // rejected while building
  int64_t duplicates = 0;  // already measured or already in the batch
};

class EvolutionarySearch {
 public:
  EvolutionarySearch(const Task& task, SearchOptions options);

  // At most `size` candidates, none of whose structural or lowered hashes
  // (candidate.h) is in `measured` and no two lowering to the same code,
  // best predicted first. When `stop` (may be empty) turns true
  // the search ends early with an empty batch. `claim` (may be empty) is
  // asked for each candidate as it is picked for the batch, and one it
  // refuses (another tuning run measures it: concurrent_runs.h) is skipped
  // as a duplicate, the next best taken instead; every candidate returned
  // was claimed.
  absl::StatusOr<std::vector<Candidate>> NextBatch(
      int size, const CostModel& model, const std::vector<Elite>& elites,
      const absl::flat_hash_set<std::string>& measured, uint64_t seed,
      SearchStats* stats = nullptr, const std::function<bool()>& stop = {},
      const std::function<bool(const Candidate&)>& claim = {});

 private:
  // A fresh sample of space `space`; nullopt when invalid.
  std::optional<Candidate> Sample(int space, uint64_t seed, SearchStats& stats);

  // The key of a point: its space (or instructions) and its decisions.
  std::string PointKey(const Candidate& parent,
                       const Decisions& decisions) const;

  const Task& task_;
  SearchOptions options_;
  std::vector<std::unique_ptr<Mutator>> mutators_;
  // Points built before, in any batch: their structural hash, or "" when
  // invalid. Mutations often land on known points; building one again costs
  // a replay and a lowering for nothing.
  absl::flat_hash_map<std::string, std::string> known_points_;
  // Each space's own point that builds, built by the first batch.
  std::optional<std::vector<Candidate>> own_points_;
};

// The RNG stream of item `index` of stage `stage` of a search seeded `seed`.
uint64_t StreamSeed(uint64_t seed, uint64_t stage, uint64_t index);

}  // namespace lathe::tuner
