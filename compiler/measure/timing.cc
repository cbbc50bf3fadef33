#include "compiler/measure/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

namespace lathe {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Nearest-rank percentile of sorted values, p in [0, 1].
double Percentile(const std::vector<double>& sorted, double p) {
  size_t rank =
      static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

}  // namespace

TimingStats SummarizeSamples(std::vector<double> samples_s) {
  TimingStats stats;
  std::vector<double> sorted = samples_s;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  stats.median_s =
      n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  stats.min_s = sorted.front();
  stats.p90_s = Percentile(sorted, 0.9);
  double sum = 0;
  for (double s : sorted) sum += s;
  stats.mean_s = sum / static_cast<double>(n);
  double var = 0;
  for (double s : sorted) var += (s - stats.mean_s) * (s - stats.mean_s);
  stats.stddev_s = std::sqrt(var / static_cast<double>(n));
  stats.samples_s = std::move(samples_s);
  return stats;
}

absl::StatusOr<TimingStats> TimeRepeatedly(
    const std::function<absl::Status()>& fn, const TimingOptions& options) {
  if (options.min_time_s < 0 || options.warmup_s < 0 ||
      options.min_samples < 1 || options.max_samples < options.min_samples ||
      options.min_sample_s < 0) {
    return absl::InvalidArgumentError("timing: options out of range");
  }
  // 1. Warm-up: caches, page faults, the thread pool's start, CPU clocks.
  //    It also estimates the time of one call, to size the batches.
  //    The fastest warm-up call is the estimate: the first ones pay for
  //    cold caches and page faults.
  Clock::time_point start = Clock::now();
  double per_call = 0;
  bool first = true;
  do {
    Clock::time_point t0 = Clock::now();
    if (absl::Status st = fn(); !st.ok()) return st;
    double t = SecondsSince(t0);
    per_call = first ? t : std::min(per_call, t);
    first = false;
  } while (SecondsSince(start) < options.warmup_s);
  // 2. Calls per sample: enough for min_sample_s, at least one.
  int64_t batch = 1;
  if (per_call > 0 && per_call < options.min_sample_s) {
    batch = static_cast<int64_t>(std::ceil(options.min_sample_s / per_call));
  }
  // 3. Samples until both the total time and the count are reached.
  std::vector<double> samples;
  double total = 0;
  while (static_cast<int>(samples.size()) < options.max_samples &&
         (total < options.min_time_s ||
          static_cast<int>(samples.size()) < options.min_samples)) {
    Clock::time_point t0 = Clock::now();
    for (int64_t i = 0; i < batch; ++i) {
      if (absl::Status st = fn(); !st.ok()) return st;
    }
    double elapsed = SecondsSince(t0);
    total += elapsed;
    samples.push_back(elapsed / static_cast<double>(batch));
  }
  TimingStats stats = SummarizeSamples(std::move(samples));
  stats.calls_per_sample = batch;
  return stats;
}

}  // namespace lathe
