// The cost model: ranks candidate programs by predicted speed so that the
// search measures the promising ones.
//
// Trained on measured programs (feature vectors and throughputs, grouped by
// task, since throughputs of different tasks do not compare); predicts a
// score per program, higher meaning faster, comparable within a task.
// Tests: tests/tuner/cost_model/.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lathe::tuner {

struct TrainingSet {
  std::vector<std::vector<float>> features;  // one row per measured program
  std::vector<double> throughputs;           // e.g. GFLOP/s; 0 for failures
  std::vector<int> groups;                   // the task of each row
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  // Retrains on everything measured so far (the whole set, not a delta).
  virtual absl::Status Train(const TrainingSet& data) = 0;
  // Scores of programs of one task; before any training, all equal (0).
  virtual absl::StatusOr<std::vector<double>> Predict(
      const std::vector<std::vector<float>>& features) const = 0;
  virtual bool trained() const = 0;
  // The model as bytes (saved in the database per target) and back.
  virtual absl::StatusOr<std::string> Save() const = 0;
  virtual absl::Status Load(const std::string& bytes) = 0;
};

// The share of pairs of programs of the same task with different
// throughputs whose predicted order is right; 0.5 is chance. NaN-free: 0.5
// when there is no such pair. Pairs whose throughputs differ by no more
// than `tolerance` of the faster one are left out too: within the
// measurement's noise, neither order is right (bench_cost_model).
double PairwiseAccuracy(const std::vector<double>& predicted,
                        const std::vector<double>& throughputs,
                        const std::vector<int>& groups, double tolerance = 0);

}  // namespace lathe::tuner
