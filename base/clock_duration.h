// Seconds given as a double (a flag, a field of a request) as a clock
// duration.
//
// Converting a double to std::chrono's integer ticks is undefined when the
// value does not fit: `--timeout 1e300` became a deadline in the past, and
// every candidate timed out. Durations are held to [0, kMaxDurationSeconds]:
// CheckDurationSeconds refuses a value outside (at the flag or the field
// that carries it, with an error naming it), and ClockDuration clamps, so
// that a conversion never overflows even where a value was not checked.
// Tests: tests/base/clock_duration_test.cc.
#pragma once

#include <chrono>
#include <cmath>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace lathe {

// A week: longer than any timeout, lease or minimum measuring time means.
inline constexpr double kMaxDurationSeconds = 7 * 86400.0;

// InvalidArgument naming `what` unless `seconds` is a number in
// [0, kMaxDurationSeconds] (in (0, kMaxDurationSeconds] when
// `positive`).
inline absl::Status CheckDurationSeconds(absl::string_view what, double seconds,
                                         bool positive = true) {
  const bool in_range = std::isfinite(seconds) &&
                        (positive ? seconds > 0 : seconds >= 0) &&
                        seconds <= kMaxDurationSeconds;
  if (in_range) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " must be a finite number of seconds in ",
                   positive ? "(0, " : "[0, ", kMaxDurationSeconds,
                   "] (kMaxDurationSeconds), got ", seconds));
}

// `seconds` clamped to [0, kMaxDurationSeconds] (NaN as 0), in the ticks
// of std::chrono::steady_clock.
inline std::chrono::steady_clock::duration ClockDuration(double seconds) {
  if (!(seconds > 0)) return std::chrono::steady_clock::duration::zero();
  if (seconds > kMaxDurationSeconds) seconds = kMaxDurationSeconds;
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(seconds));
}

}  // namespace lathe
