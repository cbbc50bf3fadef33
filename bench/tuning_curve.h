// The figures bench_tune (tune.cc) draws from a tuning run's report
// (tuner/search/tuner.h): the tuning curve -- the best throughput found so
// far against trials and against wall time --, its points at checkpoints,
// the search overhead, and the cost model's mean pairwise accuracy on
// batches it had not trained on, by how many rows it had trained on, on
// every pair or on the pairs the measurement can order.
// Tests: tests/bench/tuning_curve_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuner/search/tuner.h"

namespace lathe::bench {

struct CurvePoint {
  int64_t trials = 0;      // trials of the task measured so far
  double at_s = 0;         // seconds since the start when the last finished
  double best_gflops = 0;  // fastest OK candidate so far; 0 while none is
};

// One point per trial of `task` in `history`, in order; trials of other
// tasks are skipped. A trial counts toward the best only when its status is
// MEASURE_OK and its median is positive. `flops`: the task's work per call.
std::vector<CurvePoint> TuningCurve(
    const std::vector<tuner::TuneReport::Trial>& history, int task,
    int64_t flops);

// The structural hash of the fastest trial (lowest positive median, status
// MEASURE_OK; the first of equal ones) among the first `trials` trials of
// `task` in `history`; empty when none of them ran. What the tuner had found
// "within N trials", for a run of more than N.
std::string FastestWithin(const std::vector<tuner::TuneReport::Trial>& history,
                          int task, int64_t trials);

// The curve's points at the given trial counts (those it reaches, in the
// order given), then its last point when that is not among them.
std::vector<CurvePoint> AtCheckpoints(const std::vector<CurvePoint>& curve,
                                      const std::vector<int64_t>& checkpoints);

// The share of wall time spent outside measurement: 1 - measure_s / wall_s,
// clamped to [0, 1]; 0 when wall_s <= 0.
double SearchOverhead(double measure_s, double wall_s);

struct AccuracySummary {
  int batches = 0;  // batches counted
  double mean = 0;  // their mean pairwise accuracy; 0 when batches == 0
};

// The mean of accuracy[i] over the batches whose model had trained on at
// least `min_rows` rows and fewer than `max_rows` (trained_on[i]; the two
// vectors are the accuracy and trained_on of TuneReport::judged_batches'
// rows, of equal length; extra entries of either are ignored). max_rows <=
// 0: no upper bound.
AccuracySummary MeanAccuracy(const std::vector<double>& accuracy,
                             const std::vector<int64_t>& trained_on,
                             int64_t min_rows, int64_t max_rows = 0);

// The model's pairwise accuracy on each of `batches` (TuneReport::
// judged_batches, in order) counting only the pairs whose labels differ by
// more than `gap` (relative to the faster): the pairs the measurement can
// order. Why: late in a run a batch is mostly programs on one plateau, and
// their labels order pairs closer than about 1% like another measurement
// of them at chance (bench/README.md, "Why the code is as it is"), so
// no model's strict accuracy on such a batch says how well it ranks.
std::vector<double> AccuracyOnPairsApart(
    const std::vector<tuner::TuneReport::JudgedBatch>& batches, double gap);

}  // namespace lathe::bench
