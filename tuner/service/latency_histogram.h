// A histogram of durations for operators' metrics (Prometheus's histogram
// type): how many observations fell at or below each of a fixed, ascending
// list of upper bounds, their sum and their count. Observations are counted
// under a lock (the daemon observes one per batch commit; a scrape copies
// the counts). The bounds are the program's, not input: they must be
// ascending and finite (LATHE_CHECK); NaN observations are dropped.
// Thread-safe. Tests: tests/tuner/service/latency_histogram_test.cc.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

namespace lathe::service {

// A histogram's counts at one moment. counts[i] is the number of
// observations in (bounds[i-1], bounds[i]] (not cumulative); counts has one
// entry more than bounds, the observations above the last bound.
struct HistogramSnapshot {
  std::vector<double> bounds;
  std::vector<uint64_t> counts;
  double sum = 0;
  uint64_t count = 0;
};

class LatencyHistogram {
 public:
  explicit LatencyHistogram(std::vector<double> bounds);

  void Observe(double seconds);
  HistogramSnapshot Snapshot() const;

 private:
  mutable std::mutex mutex_;
  HistogramSnapshot counts_;
};

}  // namespace lathe::service
