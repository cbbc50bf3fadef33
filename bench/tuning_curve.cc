#include "bench/tuning_curve.h"

#include <algorithm>

#include "tuner/cost_model/cost_model.h"

namespace lathe::bench {

std::vector<CurvePoint> TuningCurve(
    const std::vector<tuner::TuneReport::Trial>& history, int task,
    int64_t flops) {
  std::vector<CurvePoint> curve;
  CurvePoint point;
  for (const tuner::TuneReport::Trial& trial : history) {
    if (trial.task != task) continue;
    ++point.trials;
    point.at_s = trial.at_s;
    if (trial.status == proto::MEASURE_OK && trial.median_s > 0) {
      point.best_gflops =
          std::max(point.best_gflops,
                   static_cast<double>(flops) / trial.median_s * 1e-9);
    }
    curve.push_back(point);
  }
  return curve;
}

std::string FastestWithin(const std::vector<tuner::TuneReport::Trial>& history,
                          int task, int64_t trials) {
  const tuner::TuneReport::Trial* fastest = nullptr;
  int64_t seen = 0;
  for (const tuner::TuneReport::Trial& trial : history) {
    if (trial.task != task) continue;
    if (++seen > trials) break;
    if (trial.status != proto::MEASURE_OK || !(trial.median_s > 0)) continue;
    if (fastest == nullptr || trial.median_s < fastest->median_s)
      fastest = &trial;
  }
  return fastest == nullptr ? "" : fastest->structural_hash;
}

std::vector<CurvePoint> AtCheckpoints(const std::vector<CurvePoint>& curve,
                                      const std::vector<int64_t>& checkpoints) {
  std::vector<CurvePoint> points;
  bool last_included = false;
  for (int64_t c : checkpoints) {
    if (c < 1 || c > static_cast<int64_t>(curve.size())) continue;
    points.push_back(curve[c - 1]);
    if (c == static_cast<int64_t>(curve.size())) last_included = true;
  }
  if (!curve.empty() && !last_included) points.push_back(curve.back());
  return points;
}

double SearchOverhead(double measure_s, double wall_s) {
  if (!(wall_s > 0)) return 0;
  return std::clamp(1 - measure_s / wall_s, 0.0, 1.0);
}

AccuracySummary MeanAccuracy(const std::vector<double>& accuracy,
                             const std::vector<int64_t>& trained_on,
                             int64_t min_rows, int64_t max_rows) {
  AccuracySummary summary;
  double sum = 0;
  const size_t n = std::min(accuracy.size(), trained_on.size());
  for (size_t i = 0; i < n; ++i) {
    if (trained_on[i] < min_rows) continue;
    if (max_rows > 0 && trained_on[i] >= max_rows) continue;
    sum += accuracy[i];
    ++summary.batches;
  }
  if (summary.batches > 0) summary.mean = sum / summary.batches;
  return summary;
}

std::vector<double> AccuracyOnPairsApart(
    const std::vector<tuner::TuneReport::JudgedBatch>& batches, double gap) {
  std::vector<double> accuracy;
  for (const tuner::TuneReport::JudgedBatch& batch : batches) {
    // A judged batch is of one task.
    const std::vector<int> one_task(batch.throughputs.size(), 0);
    accuracy.push_back(tuner::PairwiseAccuracy(
        batch.predicted, batch.throughputs, one_task, gap));
  }
  return accuracy;
}

}  // namespace lathe::bench
