// Tests of runner/cache_flush.h.
#include "runner/cache_flush.h"

#include <chrono>
#include <thread>

#include "gtest/gtest.h"

namespace lathe::runner {
namespace {

TEST(CacheFlush, LargestCacheIsPlausible) {
  int64_t bytes = LargestCacheBytes();
  EXPECT_GE(bytes, int64_t{256} << 10);
  EXPECT_LE(bytes, int64_t{4} << 30);
}

TEST(CacheFlush, FlusherIsAtLeastOneMebibyte) {
  EXPECT_EQ(CacheFlusher(10).bytes(), int64_t{1} << 20);
  EXPECT_EQ(CacheFlusher::ForThisMachine().bytes(), 2 * LargestCacheBytes());
}

TEST(CacheFlush, FlushesBeforeEveryCountedCallAndCountsOneCallPerSample) {
  CacheFlusher flusher(int64_t{1} << 20);
  TimingOptions options;
  options.warmup_s = 0;  // one warm-up call
  options.min_time_s = 0;
  options.min_samples = 5;
  int calls = 0;
  absl::StatusOr<TimingStats> stats = TimeWithCacheFlush(
      [&] {
        ++calls;
        return absl::OkStatus();
      },
      options, flusher);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(calls, 1 + 5);
  EXPECT_EQ(stats->samples_s.size(), 5u);
  EXPECT_EQ(stats->calls_per_sample, 1);
}

TEST(CacheFlush, SampleTimesExcludeTheFlush) {
  // A flush of 128 MiB takes tens of ms; a call of 2 ms must read as 2 ms
  // plus the noise of a busy machine, far below the flush.
  CacheFlusher flusher(int64_t{128} << 20);
  auto start = std::chrono::steady_clock::now();
  flusher.Flush();
  double flush_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  TimingOptions options;
  options.warmup_s = 0;
  options.min_time_s = 0;
  options.min_samples = 5;
  absl::StatusOr<TimingStats> stats = TimeWithCacheFlush(
      [] {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        return absl::OkStatus();
      },
      options, flusher);
  ASSERT_TRUE(stats.ok()) << stats.status();
  // The fastest sample: were the flush counted, even it would exceed it.
  EXPECT_GE(stats->min_s, 0.002);
  EXPECT_LT(stats->min_s, 0.002 + flush_s / 2)
      << "a flush takes " << flush_s << " s";
}

TEST(CacheFlush, KeepsSamplingUntilTheMinimumTimeWithinTheMaximumCount) {
  CacheFlusher flusher(int64_t{1} << 20);  // flushes of microseconds
  TimingOptions options;
  options.warmup_s = 0;
  options.min_time_s = 0.02;
  options.min_samples = 1;
  options.max_samples = 1000;
  auto sleep_1ms = [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return absl::OkStatus();
  };
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<TimingStats> stats =
      TimeWithCacheFlush(sleep_1ms, options, flusher);
  double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_TRUE(stats.ok()) << stats.status();
  // Calls of at least 1 ms (more on a busy machine) for 20 ms.
  EXPECT_GE(took, 0.02);
  EXPECT_GE(stats->samples_s.size(), 2u);
  EXPECT_LE(stats->samples_s.size(), 20u);

  options.max_samples = 3;
  stats = TimeWithCacheFlush(sleep_1ms, options, flusher);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->samples_s.size(), 3u);
}

TEST(CacheFlush, MinimumTimeCountsTheFlushes) {
  // Calls of ~0 s: the flushes alone must end the sampling.
  CacheFlusher flusher(int64_t{8} << 20);
  TimingOptions options;
  options.warmup_s = 0;
  options.min_time_s = 0.05;
  options.min_samples = 1;
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<TimingStats> stats =
      TimeWithCacheFlush([] { return absl::OkStatus(); }, options, flusher);
  ASSERT_TRUE(stats.ok()) << stats.status();
  double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_GE(took, 0.05);
  EXPECT_LT(took, 1.0);
  EXPECT_LT(stats->samples_s.size(), 100000u);
}

TEST(CacheFlush, StopsAtTheFirstErrorAndRefusesBadOptions) {
  CacheFlusher flusher(int64_t{1} << 20);
  TimingOptions options;
  int calls = 0;
  absl::StatusOr<TimingStats> stats = TimeWithCacheFlush(
      [&] {
        return ++calls == 3 ? absl::InternalError("kernel k returned 1")
                            : absl::OkStatus();
      },
      options, flusher);
  EXPECT_EQ(stats.status().message(), "kernel k returned 1");
  options.min_samples = 0;
  EXPECT_EQ(
      TimeWithCacheFlush([] { return absl::OkStatus(); }, options, flusher)
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lathe::runner
