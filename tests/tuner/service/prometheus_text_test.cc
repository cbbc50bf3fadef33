#include "tuner/service/prometheus_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace lathe::service {
namespace {

TEST(PrometheusText, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(EscapeLabelValue("plain"), "plain");
  EXPECT_EQ(EscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  // Help text keeps its quotes.
  EXPECT_EQ(EscapeHelp("say \"hi\"\\\nbye"), "say \"hi\"\\\\\\nbye");
}

TEST(PrometheusText, ValuesReadBackExactly) {
  EXPECT_EQ(FormatMetricValue(0), "0");
  EXPECT_EQ(FormatMetricValue(12345678901), "12345678901");
  EXPECT_EQ(FormatMetricValue(-3), "-3");
  EXPECT_EQ(FormatMetricValue(0.005), "0.005");
  EXPECT_EQ(FormatMetricValue(2.5), "2.5");
  EXPECT_EQ(FormatMetricValue(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(FormatMetricValue(1718000000.25), "1718000000.25");
  EXPECT_EQ(FormatMetricValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatMetricValue(-std::numeric_limits<double>::infinity()),
            "-Inf");
  EXPECT_EQ(FormatMetricValue(std::nan("")), "NaN");
}

TEST(PrometheusText, FamiliesAndSamples) {
  PrometheusText page;
  page.Family("lathe_things", MetricType::kGauge, "Things\nby state.");
  page.Sample("lathe_things", {{"state", "odd \"one\""}}, 2);
  page.Sample("lathe_things", {{"a", "x"}, {"b", "y\\z"}}, 0.5);
  page.Family("lathe_events_total", MetricType::kCounter, "Events.");
  page.Sample("lathe_events_total", {}, 7);
  EXPECT_EQ(page.text(),
            "# HELP lathe_things Things\\nby state.\n"
            "# TYPE lathe_things gauge\n"
            "lathe_things{state=\"odd \\\"one\\\"\"} 2\n"
            "lathe_things{a=\"x\",b=\"y\\\\z\"} 0.5\n"
            "# HELP lathe_events_total Events.\n"
            "# TYPE lathe_events_total counter\n"
            "lathe_events_total 7\n");
}

TEST(PrometheusText, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  LatencyHistogram histogram({0.01, 0.1, 1});
  // Exact in binary, so that the sum is too.
  for (double seconds : {0.0078125, 0.0625, 0.0625, 2.0})
    histogram.Observe(seconds);
  PrometheusText page;
  page.Family("lathe_commit_seconds", MetricType::kHistogram, "Commits.");
  page.Histogram("lathe_commit_seconds", {{"db", "main"}},
                 histogram.Snapshot());
  EXPECT_EQ(page.text(),
            "# HELP lathe_commit_seconds Commits.\n"
            "# TYPE lathe_commit_seconds histogram\n"
            "lathe_commit_seconds_bucket{db=\"main\",le=\"0.01\"} 1\n"
            "lathe_commit_seconds_bucket{db=\"main\",le=\"0.1\"} 3\n"
            "lathe_commit_seconds_bucket{db=\"main\",le=\"1\"} 3\n"
            "lathe_commit_seconds_bucket{db=\"main\",le=\"+Inf\"} 4\n"
            "lathe_commit_seconds_sum{db=\"main\"} 2.1328125\n"
            "lathe_commit_seconds_count{db=\"main\"} 4\n");
}

TEST(PrometheusText, AnEmptyHistogramHasEveryBucketAtZero) {
  PrometheusText page;
  page.Family("h", MetricType::kHistogram, "H.");
  page.Histogram("h", {}, LatencyHistogram({1}).Snapshot());
  EXPECT_EQ(page.text(),
            "# HELP h H.\n# TYPE h histogram\n"
            "h_bucket{le=\"1\"} 0\nh_bucket{le=\"+Inf\"} 0\n"
            "h_sum 0\nh_count 0\n");
}

TEST(PrometheusTextDeathTest, NamesAreTheProgramsAndChecked) {
  EXPECT_DEATH(
      {
        PrometheusText page;
        page.Family("9lives", MetricType::kGauge, "");
      },
      "not a Prometheus name");
  EXPECT_DEATH(
      {
        PrometheusText page;
        page.Family("g", MetricType::kGauge, "");
        page.Sample("g", {{"bad-label", "v"}}, 1);
      },
      "not a Prometheus label name");
  EXPECT_DEATH(
      {
        PrometheusText page;
        page.Family("g", MetricType::kGauge, "");
        page.Sample("other", {}, 1);
      },
      "family opened last");
}

}  // namespace
}  // namespace lathe::service
