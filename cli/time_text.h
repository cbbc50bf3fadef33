// Kernel times as commands print them: in the unit that keeps their digits.
// A 4x4 matmul's 20 ns printed as "0.0000 ms" (what every command did)
// tells its user nothing; a 2 s kernel in ns is as hard to read.
// Tests: tests/cli/tune_commands_test.sh (case prints_small_times).
#pragma once

#include <string>

namespace lathe::cli {

// The unit for `seconds`: s from 1 s, ms from 1 ms, us from 1 us, else ns.
struct TimeUnit {
  double per_second;  // 1e3 for ms
  const char* name;   // "ms"
};
TimeUnit TimeUnitFor(double seconds);

// `seconds` in `unit`, to five significant digits ("1.2253 ms", "20.410 us",
// "146.63 us"); ns with one decimal ("19.8 ns").
std::string TimeIn(double seconds, TimeUnit unit);
// The same without the unit ("1.2253"), for a column whose heading names it.
std::string NumberIn(double seconds, TimeUnit unit);

// `seconds` in its own unit: TimeIn(seconds, TimeUnitFor(seconds)).
std::string TimeText(double seconds);

}  // namespace lathe::cli
