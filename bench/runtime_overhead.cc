// bench_runtime_overhead: the cost of one empty lathe_parallel_for call.
//
// Generated kernels call lathe_parallel_for on every invocation, so its fixed
// cost bounds how small a kernel may be worth parallelizing. Prints, at 1 and
// 2 threads (and more if given: bench_runtime_overhead 1 2 4 8):
//  - hot:  back-to-back calls, workers still spinning (the common case for a
//          model running kernel after kernel);
//  - cold: calls 2 ms apart, workers asleep on their futex (the first call
//          after idle pays a wake-up).
// Each call runs `threads` empty tasks (one per thread). Reports the median
// and the 10th/90th percentiles of many samples. Not a test: timings depend on
// the machine and its load. Set LATHE_PIN_THREADS=1 to pin, as measurement
// does.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "compiler/runtime/lathe_runtime.h"

namespace {

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int EmptyTask(int64_t, void*) { return 0; }

struct Summary {
  double p10, median, p90;
};

Summary Summarize(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) {
    return samples[static_cast<size_t>(q * (samples.size() - 1))];
  };
  return {at(0.1), at(0.5), at(0.9)};
}

// Median ns per call over batches of back-to-back calls.
Summary Hot(int threads) {
  constexpr int kBatches = 200;
  constexpr int kCallsPerBatch = 500;
  for (int i = 0; i < 2000; ++i)
    lathe_parallel_for(threads, &EmptyTask, nullptr);
  std::vector<double> samples;
  for (int batch = 0; batch < kBatches; ++batch) {
    const int64_t start = NowNs();
    for (int i = 0; i < kCallsPerBatch; ++i) {
      lathe_parallel_for(threads, &EmptyTask, nullptr);
    }
    samples.push_back(static_cast<double>(NowNs() - start) / kCallsPerBatch);
  }
  return Summarize(samples);
}

// ns of single calls made after the workers have gone to sleep.
Summary Cold(int threads) {
  constexpr int kSamples = 200;
  std::vector<double> samples;
  lathe_parallel_for(threads, &EmptyTask, nullptr);
  for (int i = 0; i < kSamples; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const int64_t start = NowNs();
    lathe_parallel_for(threads, &EmptyTask, nullptr);
    samples.push_back(static_cast<double>(NowNs() - start));
  }
  return Summarize(samples);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> thread_counts;
  for (int i = 1; i < argc; ++i) thread_counts.push_back(std::atoi(argv[i]));
  if (thread_counts.empty()) thread_counts = {1, 2};

  std::printf("lathe runtime %s: overhead of one empty lathe_parallel_for\n",
              lathe_runtime_version());
  std::printf("%8s  %-5s %10s %10s %10s\n", "threads", "case", "p10_us",
              "median_us", "p90_us");
  for (int threads : thread_counts) {
    if (threads < 1) continue;
    lathe_set_num_threads(threads);
    const Summary hot = Hot(threads);
    const Summary cold = Cold(threads);
    std::printf("%8d  %-5s %10.3f %10.3f %10.3f\n", threads, "hot",
                hot.p10 / 1e3, hot.median / 1e3, hot.p90 / 1e3);
    std::printf("%8d  %-5s %10.3f %10.3f %10.3f\n", threads, "cold",
                cold.p10 / 1e3, cold.median / 1e3, cold.p90 / 1e3);
  }
  return 0;
}
