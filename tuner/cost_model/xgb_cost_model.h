// XgbCostModel: the cost model as gradient-boosted trees (XGBoost, through
// its C API) trained to rank programs of the same task.
//
// The objective is rank:pairwise with one query group per task: only the
// order of programs of the same task is learned, never the throughput
// itself, so tasks of very different speeds train together. Labels are
// throughput / best throughput of the task (failures 0); pairwise ranking
// only compares labels inside a group, so this scaling does not change what
// is learned but keeps labels in [0, 1] for any objective swapped in later.
//
// Reproducible: training on the same rows with the same options gives the
// same trees bit for bit, hence the same predictions and the same search.
// XGBoost's pair sampling is seeded by the round number, and its histogram
// sums depend on the number of threads, so `num_threads` is part of what
// must stay fixed. The default, 1, also leaves the cores to measurement, and
// XGBoost's OpenMP threads spin-wait: with 2 threads on a busy 2-core
// machine one training took 10x the CPU time of 1 thread.
//
// Not thread-safe: one thread at a time per model.
// Tests: tests/tuner/cost_model/xgb_cost_model_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner/cost_model/cost_model.h"

namespace lathe::tuner {

struct XgbCostModelOptions {
  // Many shallow, slow-learning trees, each on half the features: they rank
  // the search's next batch better than fewer, deeper trees, on every
  // tuning run tried, at a training time that still allows retraining after
  // every measured batch (bench/README.md, "Why the code is as it is").
  int num_rounds = 500;         // trees; fixed (no early stopping): no
                                // validation rows to spare, and a fixed
                                // count keeps the time predictable
  double learning_rate = 0.05;  // XGBoost's eta
  int max_depth = 4;
  // A row's hessian is 2 p (1 - p) <= 0.5 per sampled pair it is in (about
  // two a round), less once the pair is ordered confidently: 1 keeps a leaf
  // from fitting a single row.
  double min_child_weight = 1.0;
  double min_split_loss = 0.001;  // gamma: no splits that gain nothing
  double lambda = 1.0;            // L2 on leaf weights
  // Histogram bins per feature. The cost of `hist` grows with nodes x
  // features x bins, and a few thousand rows do not fill XGBoost's default
  // 256: 32 trains several times faster, and is no less accurate on the
  // synthetic rankings of the tests or on tuning records.
  int max_bin = 32;
  double subsample = 1.0;         // share of the rows each tree sees
  double colsample_bytree = 0.5;  // share of the features each tree sees
  // Any XGBoost objective; the labels are throughput / the task's best
  // either way, so a regression ("reg:squarederror") learns the normalized
  // throughput and a ranking one only the order inside each task.
  std::string objective = "rank:pairwise";
  uint64_t seed = 0;    // XGBoost's seed (any sampling it does)
  int num_threads = 1;  // see the header comment on determinism
};

class XgbCostModel : public CostModel {
 public:
  explicit XgbCostModel(XgbCostModelOptions options = {});
  ~XgbCostModel() override;
  XgbCostModel(XgbCostModel&&) noexcept;
  XgbCostModel& operator=(XgbCostModel&&) noexcept;
  XgbCostModel(const XgbCostModel&) = delete;
  XgbCostModel& operator=(const XgbCostModel&) = delete;

  // Replaces the model by one trained on `data`. Rows need not be sorted by
  // group. InvalidArgument: no rows, rows of different lengths or of length
  // 0, sizes of features/throughputs/groups that differ, an infinite
  // feature (NaN is accepted and means "missing"), a negative or NaN
  // throughput. Internal: XGBoost failed (the message names the call).
  // On error the previous model is kept.
  absl::Status Train(const TrainingSet& data) override;

  // One score per row, in order. Untrained: all 0. InvalidArgument: rows of
  // different lengths, an infinite feature, or (trained) rows whose length
  // is not the trained feature count.
  absl::StatusOr<std::vector<double>> Predict(
      const std::vector<std::vector<float>>& features) const override;

  bool trained() const override { return booster_ != nullptr; }
  int num_features() const { return num_features_; }

  // A line "lathe-xgb 2 LENGTH HASH" and XGBoost's model as UBJSON.
  // FailedPrecondition when untrained: there is nothing worth storing.
  absl::StatusOr<std::string> Save() const override;
  // InvalidArgument when `bytes` is not what Save returns (another format,
  // truncated, or any byte changed); the previous model is kept then.
  absl::Status Load(const std::string& bytes) override;

 private:
  struct BoosterFree {
    void operator()(void* booster) const;
  };
  using BoosterPtr = std::unique_ptr<void, BoosterFree>;

  XgbCostModelOptions options_;
  BoosterPtr booster_;  // null until trained or loaded
  int num_features_ = 0;
};

}  // namespace lathe::tuner
