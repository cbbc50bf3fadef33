// Prometheus's text exposition format, version 0.0.4: what `lathe serve
// --metrics-listen` answers on GET /metrics (docs/service.md, "Metrics").
//
// A page is a list of metric families, each opened by its `# HELP` and
// `# TYPE` lines and followed by its samples, one a line:
//   name{label="value",...} value
// Label values escape backslash, double quote and newline (\\, \", \n);
// help text escapes backslash and newline. Values are written so that they
// read back exactly (integers without an exponent, +Inf, -Inf, NaN). A
// histogram's samples are its buckets, cumulative, each with an `le` label
// (its upper bound) and the last `le="+Inf"` (every observation), then
// NAME_sum and NAME_count.
//
// Metric and label names are the program's, not input: they must match
// [a-zA-Z_:][a-zA-Z0-9_:]* (labels: no colon, and not "le" beside a
// histogram's own), checked with LATHE_CHECK. Label values may be anything.
// Tests: tests/tuner/service/prometheus_text_test.cc.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "tuner/service/latency_histogram.h"

namespace lathe::service {

enum class MetricType { kCounter, kGauge, kHistogram };

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// The escaped forms of the format.
std::string EscapeLabelValue(absl::string_view value);
std::string EscapeHelp(absl::string_view help);
// The shortest decimal text that reads back as `value`.
std::string FormatMetricValue(double value);

// The content type of a page in this format, for an HTTP response.
inline constexpr absl::string_view kPrometheusContentType =
    "text/plain; version=0.0.4; charset=utf-8";

class PrometheusText {
 public:
  // Opens a family: its HELP and TYPE lines. Each name once per page.
  void Family(absl::string_view name, MetricType type, absl::string_view help);
  // A sample of the family opened last (a counter's or a gauge's).
  void Sample(absl::string_view name, const MetricLabels& labels, double value);
  // A histogram's samples, for the family opened last (a histogram).
  void Histogram(absl::string_view name, const MetricLabels& labels,
                 const HistogramSnapshot& histogram);

  const std::string& text() const { return text_; }

 private:
  void Line(absl::string_view name, const MetricLabels& labels,
            const std::string& value);

  std::string text_;
  std::string family_;
  MetricType type_ = MetricType::kGauge;
};

}  // namespace lathe::service
