#include "cli/time_text.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace lathe::cli {

TimeUnit TimeUnitFor(double seconds) {
  const double magnitude = std::fabs(seconds);
  if (magnitude >= 1) return {1, "s"};
  if (magnitude >= 1e-3) return {1e3, "ms"};
  if (magnitude >= 1e-6) return {1e6, "us"};
  return {1e9, "ns"};
}

std::string NumberIn(double seconds, TimeUnit unit) {
  const double value = seconds * unit.per_second;
  // Five significant digits at most: more is below any timer's resolution.
  const double magnitude = std::fabs(value);
  const int decimals = unit.per_second >= 1e9 ? 1
                       : magnitude < 10       ? 4
                       : magnitude < 100      ? 3
                                              : 2;
  return absl::StrFormat("%.*f", decimals, value);
}

std::string TimeIn(double seconds, TimeUnit unit) {
  return absl::StrCat(NumberIn(seconds, unit), " ", unit.name);
}

std::string TimeText(double seconds) {
  return TimeIn(seconds, TimeUnitFor(seconds));
}

}  // namespace lathe::cli
