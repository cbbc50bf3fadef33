#include "tuner/service/latency_histogram.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/check.h"

namespace lathe::service {

LatencyHistogram::LatencyHistogram(std::vector<double> bounds) {
  for (size_t i = 0; i < bounds.size(); ++i) {
    LATHE_CHECK(std::isfinite(bounds[i]), "histogram bound ", i,
                " is not finite");
    LATHE_CHECK(i == 0 || bounds[i - 1] < bounds[i], "histogram bound ", i,
                " (", bounds[i], ") is not above the one before");
  }
  counts_.counts.assign(bounds.size() + 1, 0);
  counts_.bounds = std::move(bounds);
}

void LatencyHistogram::Observe(double seconds) {
  if (std::isnan(seconds)) return;
  // The first bound at or above the observation (Prometheus's "le").
  const size_t bucket = static_cast<size_t>(
      std::lower_bound(counts_.bounds.begin(), counts_.bounds.end(), seconds) -
      counts_.bounds.begin());
  std::lock_guard<std::mutex> lock(mutex_);
  ++counts_.counts[bucket];
  counts_.sum += seconds;
  ++counts_.count;
}

HistogramSnapshot LatencyHistogram::Snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

}  // namespace lathe::service
