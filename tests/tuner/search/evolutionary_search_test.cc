// Tests of the evolutionary search on its own (tuner/search/
// evolutionary_search.h): warm start from measured programs, the epsilon
// share of random samples, dedupe against what is measured and within a
// batch, and reproducibility from the seed. The tuner's use of it:
// tuner_test.cc.
#include "tuner/search/evolutionary_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "compiler/codegen/cpu_target.h"
#include "compiler/workload/spec.h"
#include "tuner/cost_model/cost_model.h"
#include "tuner/search/task.h"

namespace lathe::tuner {
namespace {

// A cost model that needs no training: untrained, every score is 0 (as a
// real model before its first training); trained, a program scores the sum
// of its features, so the order is fixed and differs from the hash order.
class FakeModel : public CostModel {
 public:
  explicit FakeModel(bool trained) : trained_(trained) {}
  absl::Status Train(const TrainingSet&) override { return absl::OkStatus(); }
  absl::StatusOr<std::vector<double>> Predict(
      const std::vector<std::vector<float>>& features) const override {
    std::vector<double> scores;
    for (const std::vector<float>& f : features) {
      scores.push_back(trained_ ? std::accumulate(f.begin(), f.end(), 0.0)
                                : 0.0);
    }
    return scores;
  }
  bool trained() const override { return trained_; }
  absl::StatusOr<std::string> Save() const override { return std::string(); }
  absl::Status Load(const std::string&) override { return absl::OkStatus(); }

 private:
  bool trained_;
};

const Task& MatmulTask() {
  static const Task* const task =
      new Task(MakeTask(ParseWorkloadSpec("matmul:M=32,N=48,K=16").value(),
                        HostTarget(1), 1)
                   .value());
  return *task;
}

SearchOptions SmallSearch() {
  SearchOptions options;
  options.population = 12;
  options.generations = 2;
  options.epsilon = 0;
  return options;
}

std::vector<std::string> StructuralHashes(const std::vector<Candidate>& batch) {
  std::vector<std::string> hashes;
  for (const Candidate& c : batch) hashes.push_back(c.structural_hash);
  return hashes;
}

std::vector<Candidate> Batch(
    const SearchOptions& options, int size, const CostModel& model,
    uint64_t seed, const std::vector<Elite>& elites = {},
    const absl::flat_hash_set<std::string>& measured = {},
    SearchStats* stats = nullptr) {
  EvolutionarySearch search(MatmulTask(), options);
  absl::StatusOr<std::vector<Candidate>> batch =
      search.NextBatch(size, model, elites, measured, seed, stats);
  EXPECT_TRUE(batch.ok()) << batch.status();
  return batch.ok() ? *std::move(batch) : std::vector<Candidate>{};
}

TEST(EvolutionarySearch, TheSameSeedGivesTheSameBatch) {
  const FakeModel model(/*trained=*/true);
  SearchOptions options = SmallSearch();
  options.epsilon = 0.25;
  const std::vector<Candidate> a = Batch(options, 8, model, 42);
  const std::vector<Candidate> b = Batch(options, 8, model, 42);
  ASSERT_EQ(a.size(), 8u);
  EXPECT_EQ(StructuralHashes(a), StructuralHashes(b));
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].trace.ToText(), b[i].trace.ToText()) << i;
    EXPECT_EQ(a[i].trace.decisions, b[i].trace.decisions) << i;
  }
  // The seed is what varies the batch.
  EXPECT_NE(StructuralHashes(Batch(options, 8, model, 43)),
            StructuralHashes(a));
}

TEST(EvolutionarySearch, ABatchProposesEachProgramOnce) {
  const FakeModel model(/*trained=*/false);
  const std::vector<Candidate> batch = Batch(SmallSearch(), 16, model, 7);
  ASSERT_FALSE(batch.empty());
  std::set<std::string> structural, lowered;
  for (const Candidate& c : batch) {
    EXPECT_TRUE(structural.insert(c.structural_hash).second);
    EXPECT_TRUE(lowered.insert(c.lowered_hash).second);
  }
}

TEST(EvolutionarySearch, NeverProposesAMeasuredProgramAgain) {
  const FakeModel model(/*trained=*/true);
  const std::vector<Candidate> first = Batch(SmallSearch(), 6, model, 5);
  ASSERT_EQ(first.size(), 6u);
  // The same seed would find the same programs; measured, they are skipped,
  // whether the tuner knows their structural hash (a record) or only the
  // hash of their lowered code.
  for (bool by_structural : {true, false}) {
    absl::flat_hash_set<std::string> measured;
    for (const Candidate& c : first)
      measured.insert(by_structural ? c.structural_hash : c.lowered_hash);
    const std::vector<Candidate> second =
        Batch(SmallSearch(), 6, model, 5, {}, measured);
    EXPECT_FALSE(second.empty());
    for (const Candidate& c : second) {
      EXPECT_FALSE(measured.contains(c.structural_hash)) << by_structural;
      EXPECT_FALSE(measured.contains(c.lowered_hash)) << by_structural;
    }
  }
}

TEST(EvolutionarySearch, WarmStartsFromMeasuredPrograms) {
  const FakeModel model(/*trained=*/false);
  SearchOptions options = SmallSearch();
  // Two measured programs: the best of an earlier batch, as records.
  const std::vector<Candidate> earlier = Batch(options, 2, model, 99);
  ASSERT_EQ(earlier.size(), 2u);
  std::vector<Elite> elites;
  absl::flat_hash_set<std::string> measured;
  for (const Candidate& c : earlier) {
    elites.push_back(Elite{c.trace, 1.0});
    measured.insert(c.structural_hash);
    measured.insert(c.lowered_hash);
  }
  // Without them, every candidate is a sample (or a mutation of one) of the
  // task's design spaces; with them, mutations of the records join in: a
  // candidate built from a record's trace has no space (-1).
  auto from_records = [](const std::vector<Candidate>& batch) {
    int n = 0;
    for (const Candidate& c : batch) n += c.space == -1;
    return n;
  };
  const std::vector<Candidate> cold =
      Batch(options, 64, model, 3, {}, measured);
  const std::vector<Candidate> warm =
      Batch(options, 64, model, 3, elites, measured);
  EXPECT_EQ(from_records(cold), 0);
  EXPECT_GT(from_records(warm), 0);
  for (const Candidate& c : warm) {
    if (c.space == -1) {
      EXPECT_EQ(c.space_key.substr(0, 1), "t");
    }
  }
  // The records themselves are measured: rebuilt, not proposed.
  for (const Candidate& c : warm)
    EXPECT_FALSE(measured.contains(c.structural_hash));
}

TEST(EvolutionarySearch, StartsFromEachSpacesOwnPoint) {
  // A search of its initial population only: the batch is that population,
  // which holds the program of each space's own point (the decisions its
  // trace records), not only fresh samples; in every batch of the search
  // (the second one's points built by the first).
  const FakeModel model(/*trained=*/false);
  SearchOptions options = SmallSearch();
  options.generations = 0;
  EvolutionarySearch search(MatmulTask(), options);
  std::vector<std::vector<Candidate>> batches;
  for (uint64_t seed : {5, 6}) {
    absl::StatusOr<std::vector<Candidate>> batch =
        search.NextBatch(64, model, {}, {}, seed);
    ASSERT_TRUE(batch.ok()) << batch.status();
    batches.push_back(*std::move(batch));
  }
  const std::vector<Trace>& spaces = MatmulTask().spaces;
  ASSERT_FALSE(spaces.empty());
  for (size_t s = 0; s < spaces.size(); ++s) {
    SCOPED_TRACE(s);
    ASSERT_FALSE(spaces[s].decisions.empty());
    absl::StatusOr<Candidate> own =
        BuildCandidate(MatmulTask(), static_cast<int>(s), spaces[s],
                       spaces[s].decisions, /*seed=*/1);
    ASSERT_TRUE(own.ok()) << own.status();
    for (const std::vector<Candidate>& batch : batches) {
      EXPECT_TRUE(std::any_of(batch.begin(), batch.end(),
                              [&](const Candidate& c) {
                                return c.lowered_hash == own->lowered_hash;
                              }))
          << spaces[s].ToText();
    }
  }
}

TEST(EvolutionarySearch, SkipsARecordThatNoLongerReplays) {
  const FakeModel model(/*trained=*/false);
  // A record of an older design space: a block it names is gone.
  Trace stale = MatmulTask().spaces[0];
  ASSERT_EQ(stale.instructions[0].kind, "get_block");
  stale.instructions[0].attrs[0].second = std::string("no_such_block");
  SearchStats with_stats, without_stats;
  const std::vector<Candidate> with =
      Batch(SmallSearch(), 4, model, 1, {Elite{stale, 1.0}}, {}, &with_stats);
  const std::vector<Candidate> without =
      Batch(SmallSearch(), 4, model, 1, {}, {}, &without_stats);
  // Counted as invalid and left out; the search goes on as without it.
  EXPECT_EQ(with_stats.invalid, without_stats.invalid + 1);
  EXPECT_EQ(with.size(), 4u);
  EXPECT_EQ(StructuralHashes(with), StructuralHashes(without));
}

TEST(EvolutionarySearch, AnEpsilonShareOfTheBatchIsRandomSamples) {
  const FakeModel model(/*trained=*/true);
  SearchOptions greedy = SmallSearch();
  greedy.epsilon = 0;
  SearchOptions explore = greedy;
  explore.epsilon = 0.3;  // of 8: ceil(2.4) = 3 random picks
  const std::vector<Candidate> best = Batch(greedy, 8, model, 11);
  const std::vector<Candidate> mixed = Batch(explore, 8, model, 11);
  ASSERT_EQ(best.size(), 8u);
  ASSERT_EQ(mixed.size(), 8u);
  // The greedy batch is the best predicted, best first.
  for (size_t i = 1; i < best.size(); ++i)
    EXPECT_GE(best[i - 1].predicted, best[i].predicted);
  // With epsilon, the first 5 are the same best predicted ...
  for (size_t i = 0; i < 5; ++i)
    EXPECT_EQ(mixed[i].structural_hash, best[i].structural_hash) << i;
  // ... and the last 3 are drawn from the fresh samples of the initial
  // population (a search without generations finds exactly those), not the
  // next best predicted.
  SearchOptions initial_only = greedy;
  initial_only.generations = 0;
  std::set<std::string> fresh;
  for (const Candidate& c : Batch(initial_only, 1000, model, 11))
    fresh.insert(c.structural_hash);
  std::set<std::string> next_best, picked;
  for (size_t i = 5; i < 8; ++i) {
    EXPECT_TRUE(fresh.count(mixed[i].structural_hash)) << i;
    next_best.insert(best[i].structural_hash);
    picked.insert(mixed[i].structural_hash);
  }
  EXPECT_NE(picked, next_best);
}

TEST(EvolutionarySearch, AnUntrainedModelTakesNoRandomShare) {
  // Before training, every score is equal: the whole batch is already
  // samples and mutations, and epsilon changes nothing.
  const FakeModel model(/*trained=*/false);
  SearchOptions greedy = SmallSearch();
  SearchOptions explore = greedy;
  explore.epsilon = 0.5;
  EXPECT_EQ(StructuralHashes(Batch(greedy, 8, model, 13)),
            StructuralHashes(Batch(explore, 8, model, 13)));
}

TEST(EvolutionarySearch, StopsWithAnEmptyBatch) {
  const FakeModel model(/*trained=*/true);
  EvolutionarySearch search(MatmulTask(), SmallSearch());
  absl::StatusOr<std::vector<Candidate>> batch =
      search.NextBatch(8, model, {}, {}, 1, nullptr, [] { return true; });
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_TRUE(batch->empty());
}

}  // namespace
}  // namespace lathe::tuner
