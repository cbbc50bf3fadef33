// One progress line of a long-running Lathe process on stderr, as the
// daemon (`lathe serve`) and the remote runner (`lathe runner`) write them:
// "12:34:56 lathe serve: job ... started" (UTC), flushed at once so that a
// supervisor's log interleaves the processes in order.
#pragma once

#include <cstdio>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace lathe {

inline void LogLine(const char* program, const std::string& line) {
  std::fprintf(
      stderr, "%s %s: %s\n",
      absl::FormatTime("%H:%M:%S", absl::Now(), absl::UTCTimeZone()).c_str(),
      program, line.c_str());
  std::fflush(stderr);
}

}  // namespace lathe
