#include "tuner/service/prometheus_text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/check.h"

namespace lathe::service {
namespace {

// [a-zA-Z_:][a-zA-Z0-9_:]*, without colons for label names.
bool ValidName(absl::string_view name, bool colon) {
  if (name.empty() || absl::ascii_isdigit(name[0])) return false;
  for (char c : name) {
    if (!(absl::ascii_isalnum(c) || c == '_' || (colon && c == ':')))
      return false;
  }
  return true;
}

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

}  // namespace

std::string EscapeLabelValue(absl::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string EscapeHelp(absl::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatMetricValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Integers (counts, below 2^53 exact) without an exponent.
  if (value == std::trunc(value) && std::fabs(value) < 9007199254740992.0) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.0f", value);
    return buffer;
  }
  // The shortest of %.15g .. %.17g that reads back as the same double.
  char buffer[40];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", digits, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  return buffer;
}

void PrometheusText::Family(absl::string_view name, MetricType type,
                            absl::string_view help) {
  LATHE_CHECK(ValidName(name, /*colon=*/true), "metric name \"", name,
              "\" is not a Prometheus name");
  family_ = std::string(name);
  type_ = type;
  absl::StrAppend(&text_, "# HELP ", name, " ", EscapeHelp(help), "\n",
                  "# TYPE ", name, " ", TypeName(type), "\n");
}

void PrometheusText::Line(absl::string_view name, const MetricLabels& labels,
                          const std::string& value) {
  absl::StrAppend(&text_, name);
  if (!labels.empty()) {
    text_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      LATHE_CHECK(ValidName(labels[i].first, /*colon=*/false), "label name \"",
                  labels[i].first, "\" of ", name,
                  " is not a Prometheus label name");
      absl::StrAppend(&text_, i == 0 ? "" : ",", labels[i].first, "=\"",
                      EscapeLabelValue(labels[i].second), "\"");
    }
    text_ += '}';
  }
  absl::StrAppend(&text_, " ", value, "\n");
}

void PrometheusText::Sample(absl::string_view name, const MetricLabels& labels,
                            double value) {
  LATHE_CHECK(name == family_ && type_ != MetricType::kHistogram, "sample ",
              name,
              " is not of the counter or gauge family opened "
              "last (",
              family_, ")");
  Line(name, labels, FormatMetricValue(value));
}

void PrometheusText::Histogram(absl::string_view name,
                               const MetricLabels& labels,
                               const HistogramSnapshot& histogram) {
  LATHE_CHECK(name == family_ && type_ == MetricType::kHistogram, "histogram ",
              name, " is not the histogram family opened last (", family_, ")");
  LATHE_CHECK(histogram.counts.size() == histogram.bounds.size() + 1,
              "histogram ", name, ": ", histogram.counts.size(), " counts for ",
              histogram.bounds.size(), " bounds");
  for (const auto& [label, value] : labels) {
    LATHE_CHECK(label != "le", "histogram ", name,
                " has a label \"le\" of its own");
  }
  const std::string bucket = absl::StrCat(name, "_bucket");
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= histogram.bounds.size(); ++i) {
    cumulative += histogram.counts[i];
    MetricLabels with_le = labels;
    with_le.emplace_back("le", i < histogram.bounds.size()
                                   ? FormatMetricValue(histogram.bounds[i])
                                   : "+Inf");
    Line(bucket, with_le, FormatMetricValue(static_cast<double>(cumulative)));
  }
  Line(absl::StrCat(name, "_sum"), labels, FormatMetricValue(histogram.sum));
  Line(absl::StrCat(name, "_count"), labels,
       FormatMetricValue(static_cast<double>(histogram.count)));
}

}  // namespace lathe::service
