#include "tuner/search/evolutionary_search.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/ir/structural_equal.h"
#include "tuner/search/mutate_categorical.h"
#include "tuner/search/mutate_compute_location.h"
#include "tuner/search/mutate_tile_size.h"

namespace lathe::tuner {
namespace {

uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Stages of a batch's RNG streams.
enum Stage : uint64_t {
  kInitial = 1,
  kMutation = 2,
  kExplore = 3,
  kParents = 4
};

absl::Status Score(const CostModel& model, std::vector<Candidate>& candidates) {
  if (!model.trained() || candidates.empty()) return absl::OkStatus();
  std::vector<std::vector<float>> features;
  features.reserve(candidates.size());
  for (const Candidate& c : candidates) features.push_back(c.features);
  absl::StatusOr<std::vector<double>> scores = model.Predict(features);
  if (!scores.ok()) return scores.status();
  for (size_t i = 0; i < candidates.size(); ++i)
    candidates[i].predicted = (*scores)[i];
  return absl::OkStatus();
}

// Best predicted first; ties by hash so the order never depends on the
// order candidates were found in.
void SortByPrediction(std::vector<Candidate>& candidates) {
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) {
                     if (a.predicted != b.predicted)
                       return a.predicted > b.predicted;
                     return a.structural_hash < b.structural_hash;
                   });
}

}  // namespace

std::string EvolutionarySearch::PointKey(const Candidate& parent,
                                         const Decisions& decisions) const {
  std::string key = parent.space_key;
  for (const auto& [index, values] : decisions) {
    absl::StrAppend(&key, ";", index, ":", absl::StrJoin(values, ","));
  }
  return key;
}

namespace {

// The space key of a candidate built from a space or from a record's trace:
// a record's instructions are hashed once here, not at every mutation.
std::string SpaceKey(int space, const Trace& trace) {
  if (space >= 0) return absl::StrCat("s", space);
  Trace instructions = trace;
  instructions.decisions.clear();
  return absl::StrCat("t", StableHash64(instructions.ToText()));
}

}  // namespace

uint64_t StreamSeed(uint64_t seed, uint64_t stage, uint64_t index) {
  return SplitMix(SplitMix(SplitMix(seed) ^ stage) ^ index);
}

EvolutionarySearch::EvolutionarySearch(const Task& task, SearchOptions options)
    : task_(task), options_(options) {
  mutators_.push_back(std::make_unique<MutateTileSize>());
  mutators_.push_back(std::make_unique<MutateCategorical>());
  mutators_.push_back(std::make_unique<MutateComputeLocation>());
}

std::optional<Candidate> EvolutionarySearch::Sample(int space, uint64_t seed,
                                                    SearchStats& stats) {
  absl::StatusOr<Candidate> candidate =
      BuildCandidate(task_, space, task_.spaces[space], /*decisions=*/{}, seed);
  if (!candidate.ok()) {
    ++stats.invalid;
    return std::nullopt;
  }
  ++stats.built;
  candidate->space_key = SpaceKey(space, task_.spaces[space]);
  return *std::move(candidate);
}

namespace {

// Measured already: the program itself (its structural hash), or one that
// lowers to the same code (candidate.h: lowered_hash). The tuner puts both
// hashes of what it dispatches in `measured`; records of earlier sessions
// bring their structural hash, and their lowered one when rebuilt.
bool Measured(const Candidate& c,
              const absl::flat_hash_set<std::string>& measured) {
  return measured.contains(c.structural_hash) ||
         measured.contains(c.lowered_hash);
}

}  // namespace

absl::StatusOr<std::vector<Candidate>> EvolutionarySearch::NextBatch(
    int size, const CostModel& model, const std::vector<Elite>& elites,
    const absl::flat_hash_set<std::string>& measured, uint64_t seed,
    SearchStats* stats_out, const std::function<bool()>& stop,
    const std::function<bool(const Candidate&)>& claim) {
  SearchStats stats;
  auto stopping = [&] { return stop && stop(); };
  const int num_spaces = static_cast<int>(task_.spaces.size());
  absl::flat_hash_set<std::string>
      seen;  // every lowered hash built in this call

  // --- Initial population: the best measured, then fresh samples.
  std::vector<Candidate> population;
  const int from_elites = std::min<int>(
      static_cast<int>(elites.size()),
      static_cast<int>(options_.population * options_.measured_share));
  for (int i = 0; i < from_elites; ++i) {
    absl::StatusOr<Candidate> c =
        BuildCandidate(task_, -1, elites[i].trace, elites[i].trace.decisions,
                       StreamSeed(seed, kInitial, i));
    if (!c.ok()) {
      ++stats.invalid;  // a record of an older design space: skip it
      continue;
    }
    ++stats.built;
    c->space_key = SpaceKey(-1, elites[i].trace);
    if (seen.insert(c->lowered_hash).second)
      population.push_back(*std::move(c));
  }
  // Each space's own point: the decisions its rules recorded, which a
  // rule may have chosen (gpu_shared_tiling.h: the best ranked tile). Its
  // decisions are all given, so it is the same program in every batch:
  // built once.
  if (!own_points_.has_value()) {
    own_points_.emplace();
    for (int s = 0; s < num_spaces; ++s) {
      if (stopping()) {
        own_points_.reset();
        return std::vector<Candidate>{};
      }
      absl::StatusOr<Candidate> c =
          BuildCandidate(task_, s, task_.spaces[s], task_.spaces[s].decisions,
                         StreamSeed(seed, kInitial, 2000000 + s));
      if (!c.ok()) {
        ++stats.invalid;  // refused by the code generator, say
        continue;
      }
      ++stats.built;
      c->space_key = SpaceKey(s, task_.spaces[s]);
      own_points_->push_back(*std::move(c));
    }
  }
  for (const Candidate& c : *own_points_) {
    if (seen.insert(c.lowered_hash).second) population.push_back(c);
  }
  std::vector<Candidate> fresh;  // unmeasured fresh samples: exploration picks
  int64_t attempts = 0;
  const int64_t max_attempts = static_cast<int64_t>(options_.population) *
                               (1 + options_.max_invalid_per_valid);
  for (int i = 0; static_cast<int>(population.size()) < options_.population &&
                  attempts < max_attempts;
       ++i, ++attempts) {
    if (stopping()) return std::vector<Candidate>{};
    std::optional<Candidate> c =
        Sample(i % num_spaces, StreamSeed(seed, kInitial, 1000000 + i), stats);
    if (!c) continue;
    if (!seen.insert(c->lowered_hash).second) {
      ++stats.duplicates;
      continue;
    }
    if (!Measured(*c, measured)) fresh.push_back(*c);
    population.push_back(*std::move(c));
  }
  LATHE_RETURN_IF_ERROR(Score(model, population));

  // Every unmeasured candidate found, by hash, for the final pick.
  std::vector<Candidate> pool;
  for (const Candidate& c : population) {
    if (!Measured(c, measured)) pool.push_back(c);
  }

  // --- Generations of mutation.
  for (int g = 0; g < options_.generations && !population.empty(); ++g) {
    SortByPrediction(population);
    // Parents by rank: weight 1/(rank+1) favours the best without ignoring
    // the rest (scores of an untrained model are all equal).
    std::vector<double> weights(population.size());
    for (size_t r = 0; r < population.size(); ++r)
      weights[r] = 1.0 / static_cast<double>(r + 1);
    std::vector<Candidate> children;
    for (int i = 0; i < options_.population; ++i) {
      if (stopping()) return std::vector<Candidate>{};
      Rng rng(
          StreamSeed(seed, kMutation, static_cast<uint64_t>(g) * 1000003 + i));
      const Candidate& parent =
          population[static_cast<size_t>(rng.Categorical(weights))];
      const Mutator& mutator = *mutators_[static_cast<size_t>(
          rng.UniformInt(static_cast<int64_t>(mutators_.size())))];
      std::optional<Decisions> decisions =
          mutator.Apply(parent.trace, parent.trace.decisions, rng);
      if (!decisions) continue;
      const uint64_t build_seed = rng.Next();
      const std::string key = PointKey(parent, *decisions);
      if (auto known = known_points_.find(key); known != known_points_.end()) {
        // Known invalid, or a program already found: nothing new.
        if (known->second.empty()) {
          ++stats.invalid;
        } else if (seen.contains(known->second) ||
                   measured.contains(known->second)) {
          ++stats.duplicates;
        } else {
          known = known_points_.end();  // found in an earlier batch: build it
        }
        if (known != known_points_.end()) continue;
      }
      absl::StatusOr<Candidate> child = BuildCandidate(
          task_, parent.space, parent.trace, *decisions, build_seed);
      known_points_[key] = child.ok() ? child->lowered_hash : "";
      if (!child.ok()) {
        ++stats.invalid;
        continue;
      }
      ++stats.built;
      child->space_key = parent.space_key;
      if (!seen.insert(child->lowered_hash).second) {
        ++stats.duplicates;
        continue;
      }
      children.push_back(*std::move(child));
    }
    LATHE_RETURN_IF_ERROR(Score(model, children));
    for (const Candidate& c : children) {
      if (!Measured(c, measured)) pool.push_back(c);
    }
    // The next population: the best of parents and children.
    for (Candidate& c : children) population.push_back(std::move(c));
    SortByPrediction(population);
    if (static_cast<int>(population.size()) > options_.population) {
      population.resize(static_cast<size_t>(options_.population));
    }
  }

  // --- The batch: best predicted, then an epsilon share of random samples.
  SortByPrediction(pool);
  const int explore = model.trained()
                          ? static_cast<int>(std::ceil(size * options_.epsilon))
                          : 0;
  std::vector<Candidate> batch;
  absl::flat_hash_set<std::string> in_batch;
  // A candidate looked at once, taken when claimed (a refused one is not
  // asked again).
  auto take = [&](const Candidate& c) {
    if (!in_batch.insert(c.lowered_hash).second) return;
    if (claim && !claim(c)) {
      ++stats.duplicates;
      return;
    }
    batch.push_back(c);
  };
  for (const Candidate& c : pool) {
    if (static_cast<int>(batch.size()) >= size - explore) break;
    take(c);
  }
  Rng explore_rng(StreamSeed(seed, kExplore, 0));
  while (static_cast<int>(batch.size()) < size && !fresh.empty()) {
    const size_t pick = static_cast<size_t>(
        explore_rng.UniformInt(static_cast<int64_t>(fresh.size())));
    take(fresh[pick]);
    fresh.erase(fresh.begin() + static_cast<std::ptrdiff_t>(pick));
  }
  // Still short (a small space): whatever else is unmeasured.
  for (const Candidate& c : pool) {
    if (static_cast<int>(batch.size()) >= size) break;
    take(c);
  }
  if (stats_out != nullptr) *stats_out = stats;
  return batch;
}

}  // namespace lathe::tuner
