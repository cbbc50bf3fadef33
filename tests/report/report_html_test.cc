// Tests of report/report_html.h, report/svg_chart.h and report/html_text.h:
// every string from the database is escaped (a crafted workload, runner,
// job or path cannot inject markup), and each chart says how many points it
// holds and holds that many.
#include "report/report_html.h"

#include <regex>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "report/html_text.h"
#include "report/svg_chart.h"

namespace lathe::report {
namespace {

constexpr char kHostile[] =
    "<script>alert(1)</script>\"'><img src=x onerror=alert(2)>&";

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// The text of the chart whose id is `id`: from its <svg to its </svg>.
std::string Chart(const std::string& html, const std::string& id) {
  const size_t start = html.find(absl::StrCat("id=\"", id, "\""));
  if (start == std::string::npos) return "";
  const size_t open = html.rfind("<svg", start);
  const size_t end = html.find("</svg>", start);
  return html.substr(open, end - open);
}

int DataPoints(const std::string& chart) {
  const size_t at = chart.find("data-points=\"");
  if (at == std::string::npos) return -1;
  return std::stoi(chart.substr(at + 13));
}

db::RecordSummary Summary(int64_t id, proto::MeasureStatus status,
                          std::optional<double> median) {
  db::RecordSummary r;
  r.id = id;
  r.structural_hash = kHostile;
  r.status = status;
  r.median_s = median;
  r.measured_ms = 1700000000000 + id * 1000;
  r.runner = kHostile;
  r.lathe_version = kHostile;
  r.job = kHostile;
  return r;
}

// A report of one task whose every string is hostile: 5 trials (3 ok, one
// wrong, one crashed), a default record, 3 batches (2 judged) and a model.
ReportData HostileReport() {
  ReportData data;
  data.db_path = kHostile;
  data.job = kHostile;
  data.generated_ms = 1700000000000;
  TaskData task;
  task.workload = kHostile;
  task.workload_key = kHostile;
  task.target = kHostile;
  task.flops = 1000000;
  auto add = [&](RecordKind kind, proto::MeasureStatus status,
                 std::optional<double> median) {
    TaskRecord r;
    r.record =
        Summary(static_cast<int64_t>(task.records.size()) + 1, status, median);
    r.kind = kind;
    if (kind == RecordKind::kTrial) {
      r.trial = ++task.trials;
      r.drawn = true;
      ++task.drawn;
    }
    ++task.by_status[status];
    task.records.push_back(r);
  };
  add(RecordKind::kDefault, proto::MEASURE_OK, 2e-3);
  add(RecordKind::kTrial, proto::MEASURE_OK, 1e-3);
  add(RecordKind::kTrial, proto::MEASURE_WRONG_RESULT, std::nullopt);
  add(RecordKind::kTrial, proto::MEASURE_OK, 5e-4);
  add(RecordKind::kTrial, proto::MEASURE_RUN_ERROR, std::nullopt);
  add(RecordKind::kTrial, proto::MEASURE_OK, 7e-4);
  task.records_total = 6;
  task.first_ms = task.records.front().record.measured_ms;
  task.default_median_s = 2e-3;
  task.best_curve = {{1, task.first_ms + 1000, 1e-3, 2},
                     {3, task.first_ms + 3000, 5e-4, 4}};
  task.best = task.records[3].record;
  for (int b = 0; b < 3; ++b) {
    db::TuningBatch batch;
    batch.job = kHostile;
    batch.index = b;
    batch.trials = 2;
    if (b > 0) batch.accuracy = 0.5 + 0.1 * b;
    task.batches.push_back(batch);
  }
  data.tasks.push_back(task);
  ModelData model;
  model.name = kHostile;
  model.target = kHostile;
  model.shares = {{kHostile, 2, 5e-4, 2e-3, 0}, {"other", 1, 1e-3, 1e-3, -1}};
  model.latency = {{task.first_ms, 5e-3},
                   {task.first_ms + 1000, 3e-3},
                   {task.first_ms + 3000, 2e-3}};
  model.default_latency_s = 5e-3;
  model.latency_s = 2e-3;
  data.models.push_back(model);
  return data;
}

TEST(HtmlEscape, EscapesMarkupAndDropsControlCharacters) {
  EXPECT_EQ(HtmlEscape("<a href=\"x\" title='y'>&</a>"),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
  EXPECT_EQ(HtmlEscape(std::string("a\x1b[2Jb\0c\td", 10)), "a[2Jbc\td");
  EXPECT_EQ(HtmlEscape("µs"), "µs");
}

TEST(ReportHtml, NoStringFromTheDatabaseReachesThePageUnescaped) {
  const std::string html = RenderReportHtml(HostileReport());
  EXPECT_FALSE(absl::StrContains(html, kHostile));
  EXPECT_FALSE(absl::StrContains(html, "<img"));
  // "onerror=" stays as text, in no tag.
  EXPECT_FALSE(std::regex_search(html, std::regex("<[^>]*onerror")));
  // The only script is the page's own.
  EXPECT_EQ(Count(html, "<script"), 1);
  EXPECT_EQ(Count(html, "<script>alert"), 0);
  EXPECT_TRUE(absl::StrContains(
      html, "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&gt;&lt;img"));
  // Nothing is fetched: no src or href leaves the page.
  EXPECT_FALSE(absl::StrContains(html, "src=\""));
  EXPECT_FALSE(absl::StrContains(html, "href=\"http"));
  EXPECT_FALSE(absl::StrContains(html, "url("));
}

TEST(ReportHtml, EachChartHoldsTheNumberOfPointsItSays) {
  const std::string html = RenderReportHtml(HostileReport());
  for (const char* id : {"task-0-trials", "task-0-time"}) {
    const std::string chart = Chart(html, id);
    ASSERT_FALSE(chart.empty()) << id;
    EXPECT_EQ(DataPoints(chart), 5) << id;  // every trial, failed ones too
    EXPECT_EQ(Count(chart, "class=\"pt "), 5) << id;
    EXPECT_EQ(Count(chart, "class=\"pt s-ok\""), 3) << id;
    EXPECT_EQ(Count(chart, "class=\"pt s-wrong\""), 1) << id;
    EXPECT_EQ(Count(chart, "class=\"pt s-crash\""), 1) << id;
    // The default schedule's line and the best-so-far line.
    EXPECT_EQ(Count(chart, "class=\"default\""), 1) << id;
    EXPECT_EQ(Count(chart, "class=\"best\""), 1) << id;
  }
  const std::string accuracy = Chart(html, "task-0-accuracy");
  EXPECT_EQ(DataPoints(accuracy), 2);  // the untrained batch has none
  EXPECT_EQ(Count(accuracy, "class=\"pt "), 2);
  const std::string latency = Chart(html, "model-0-latency");
  EXPECT_EQ(DataPoints(latency), 3);
  EXPECT_EQ(Count(latency, "class=\"pt "), 3);
  const std::string share = Chart(html, "model-0-share");
  EXPECT_EQ(DataPoints(share), 2);
  EXPECT_EQ(Count(share, "class=\"pt bar\""), 2);
  // The page's check is there, and so is the provenance of the best.
  EXPECT_TRUE(absl::StrContains(html, "data-report"));
  EXPECT_TRUE(absl::StrContains(html, "<th>best</th>"));
  EXPECT_TRUE(absl::StrContains(html, "<th>default</th>"));
}

TEST(ReportHtml, SaysWhatTheBoundsLeftOut) {
  ReportData data = HostileReport();
  data.tasks_total = 7;
  data.options.max_tasks = 1;
  data.tasks[0].records_total = 600;
  data.tasks[0].trials = 9;
  const std::string html = RenderReportHtml(data);
  EXPECT_TRUE(absl::StrContains(html, "Only 1 of 7 tasks are shown"));
  EXPECT_TRUE(absl::StrContains(html, "Only the first 6 of 600 records"));
  EXPECT_TRUE(absl::StrContains(html, "5 of 9 trials are drawn"));
}

TEST(SvgChart, TicksAreRoundAndCoverTheRange) {
  const std::vector<double> ticks = NiceTicks(0.13, 9.7, 5);
  ASSERT_GE(ticks.size(), 2u);
  EXPECT_LE(ticks.front(), 0.13);
  EXPECT_GE(ticks.back(), 9.7);
  EXPECT_DOUBLE_EQ(ticks[1] - ticks[0], 2);
  SvgChart chart("t", "x", "y");
  EXPECT_EQ(chart.points(), 0);
  // An empty chart still renders, with no points.
  EXPECT_TRUE(absl::StrContains(chart.Render("c"), "data-points=\"0\""));
}

}  // namespace
}  // namespace lathe::report
