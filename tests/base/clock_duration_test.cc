#include "base/clock_duration.h"

#include <chrono>
#include <limits>

#include "gtest/gtest.h"

namespace lathe {
namespace {

TEST(ClockDuration, ConvertsSecondsInRange) {
  EXPECT_EQ(ClockDuration(1.5), std::chrono::milliseconds(1500));
  EXPECT_EQ(ClockDuration(0), std::chrono::steady_clock::duration::zero());
}

TEST(ClockDuration, ClampsWhatDoesNotFitInsteadOfOverflowing) {
  const auto week = ClockDuration(kMaxDurationSeconds);
  EXPECT_EQ(ClockDuration(1e300), week);
  EXPECT_EQ(ClockDuration(std::numeric_limits<double>::infinity()), week);
  EXPECT_EQ(ClockDuration(-1e300), std::chrono::steady_clock::duration::zero());
  EXPECT_EQ(ClockDuration(std::numeric_limits<double>::quiet_NaN()),
            std::chrono::steady_clock::duration::zero());
  // A deadline that far ahead is after now, not in the past.
  EXPECT_GT(std::chrono::steady_clock::now() + ClockDuration(1e300),
            std::chrono::steady_clock::now());
}

TEST(CheckDurationSeconds, RefusesValuesOutOfRangeNamingThem) {
  EXPECT_TRUE(CheckDurationSeconds("--timeout", 30).ok());
  EXPECT_TRUE(CheckDurationSeconds("--min-time", 0, /*positive=*/false).ok());
  for (double bad : {1e300, -1.0, 0.0, std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()}) {
    absl::Status status = CheckDurationSeconds("--timeout", bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(status.message().find("--timeout"), std::string::npos) << status;
    EXPECT_NE(status.message().find("kMaxDurationSeconds"), std::string::npos)
        << status;
  }
}

}  // namespace
}  // namespace lathe
