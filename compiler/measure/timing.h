// Timing of one callable by the method of docs/architecture.md ("Measurement"):
// warm-up, repeats until a minimum total time, and the median and spread of all
// samples. A sample is the mean time of a batch of calls long enough for the
// clock (about 1 ms), so microsecond kernels are not measured in clock
// resolution. Pinning threads and the reference check are the caller's.
// Tests: tests/compiler/measure/timing_test.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lathe {

struct TimingOptions {
  double warmup_s = 0.05;      // calls before any sample counts (at least one)
  double min_time_s = 0.5;     // keep sampling until the samples total this
  int min_samples = 10;        // ... and there are at least this many
  int max_samples = 100000;    // a bound for callables of ~zero time
  double min_sample_s = 1e-3;  // a batch of calls per sample lasts about this
};

struct TimingStats {
  std::vector<double> samples_s;  // seconds per call, in the order measured
  int64_t calls_per_sample = 1;
  double median_s = 0;
  double min_s = 0;
  double p90_s = 0;
  double mean_s = 0;
  double stddev_s = 0;  // of the samples (population)
};

// Calls fn until the options are met. Errors: the first non-OK status fn
// returns (timing stops there); InvalidArgument for options out of range.
absl::StatusOr<TimingStats> TimeRepeatedly(
    const std::function<absl::Status()>& fn, const TimingOptions& options);

// The statistics of samples (seconds), as TimeRepeatedly fills them.
// Precondition: samples is not empty.
TimingStats SummarizeSamples(std::vector<double> samples_s);

}  // namespace lathe
