// Text for the HTML report: escaping of every string that did not come from
// the report's own code (workloads, targets, runners, jobs and paths are
// whatever the database holds), and the numbers and times it shows.
// Tests: tests/report/report_html_test.cc.
#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace lathe::report {

// `text` safe inside an HTML element or a double- or single-quoted
// attribute, SVG included: & < > " ' escaped, and control characters other
// than tab and newline dropped (they have no place in a page).
std::string HtmlEscape(absl::string_view text);

// A number in at most `digits` significant digits ("1.25", "3.1e+03" past
// 1e6); "-" for NaN or infinities.
std::string Number(double value, int digits = 4);

// A duration in seconds as "812 µs", "3.2 ms", "1.50 s" (for medians).
std::string Seconds(double s);

// A Unix time in milliseconds as "2026-11-27 09:12:00 UTC".
std::string UtcTime(int64_t unix_ms);

}  // namespace lathe::report
