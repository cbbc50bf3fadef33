// Tests of compiler/measure/timing.h.
#include "compiler/measure/timing.h"

#include <chrono>
#include <thread>

#include "gtest/gtest.h"

namespace lathe {
namespace {

TEST(Timing, SummarizesMedianMinP90AndSpread) {
  TimingStats s = SummarizeSamples({5, 1, 4, 2, 3, 6, 7, 8, 9, 10});
  EXPECT_DOUBLE_EQ(s.median_s, 5.5);
  EXPECT_DOUBLE_EQ(s.min_s, 1);
  EXPECT_DOUBLE_EQ(s.p90_s, 9);
  EXPECT_DOUBLE_EQ(s.mean_s, 5.5);
  EXPECT_NEAR(s.stddev_s, 2.8723, 1e-4);
  EXPECT_EQ(s.samples_s.size(), 10u);
}

TEST(Timing, SamplesUntilMinTimeAndCount) {
  TimingOptions options;
  options.warmup_s = 0;
  options.min_time_s = 0.02;
  options.min_samples = 5;
  int calls = 0;
  absl::StatusOr<TimingStats> s = TimeRepeatedly(
      [&] {
        ++calls;
        std::this_thread::sleep_for(std::chrono::microseconds(2000));
        return absl::OkStatus();
      },
      options);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_GE(s->samples_s.size(), 5u);
  EXPECT_EQ(s->calls_per_sample, 1);  // a 2 ms call fills a sample alone
  EXPECT_GE(s->median_s, 0.0019);
  EXPECT_GE(calls, 6);  // warm-up included
}

TEST(Timing, BatchesShortCalls) {
  TimingOptions options;
  options.min_time_s = 0.01;
  absl::StatusOr<TimingStats> s =
      TimeRepeatedly([] { return absl::OkStatus(); }, options);
  ASSERT_TRUE(s.ok());
  EXPECT_GT(s->calls_per_sample, 1);
}

TEST(Timing, StopsAtTheFirstError) {
  int calls = 0;
  absl::StatusOr<TimingStats> s = TimeRepeatedly(
      [&] {
        return ++calls == 3 ? absl::InternalError("boom") : absl::OkStatus();
      },
      {});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace lathe
