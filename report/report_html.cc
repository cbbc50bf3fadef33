#include "report/report_html.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/html_text.h"
#include "report/svg_chart.h"

namespace lathe::report {
namespace {

constexpr char kStyle[] = R"css(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;
 color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:16px 24px}
header h1{margin:0 0 4px;font-size:20px}
header p{margin:0;color:#c5cad6;font-size:13px}
main{padding:8px 24px 40px;max-width:1400px}
section{background:#fff;border:1px solid #dde1e8;border-radius:6px;
 margin:16px 0;padding:12px 16px}
h2{font-size:16px;margin:4px 0;word-break:break-all}
h3{font-size:14px;margin:12px 0 4px}
.meta{color:#5b6475;font-size:12px;word-break:break-all}
table{border-collapse:collapse;font-size:12px;margin:6px 0}
th,td{border-bottom:1px solid #e6e9ef;padding:3px 8px;text-align:left;
 vertical-align:top}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.form{max-width:420px;word-break:break-all}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));
 gap:8px}
svg.chart{width:100%;height:auto;background:#fff}
.ctitle{font-size:13px;font-weight:600;fill:#1d2330}
.tick{font-size:10px;fill:#5b6475}
.axis{font-size:11px;fill:#1d2330}
.hlabel{font-size:10px;fill:#7a5c00}
.grid{stroke:#eef0f4}
.frame{fill:none;stroke:#b9c0cc}
.best{fill:none;stroke:#1f6feb;stroke-width:2}
.latency{fill:none;stroke:#8250df;stroke-width:2}
.default{stroke:#bf8700;stroke-width:1.5;stroke-dasharray:6 4}
.chance{stroke:#8c959f;stroke-dasharray:2 3}
.pt{stroke-width:1}
.s-ok{fill:#2da44e;fill-opacity:.55;stroke:#1a7f37}
.s-wrong{fill:#fb8500;stroke:#bc4c00}
.s-crash{fill:#cf222e;stroke:#82071e}
.s-timeout{fill:#8250df;stroke:#512a97}
.s-build{fill:#8c959f;stroke:#57606a}
.s-acc{fill:#1f6feb;stroke:#0a3069}
.s-lat{fill:#8250df;stroke:#512a97}
.bar{fill:#1f6feb;fill-opacity:.8}
.legend span{display:inline-block;margin-right:14px;font-size:12px}
.legend i{display:inline-block;width:10px;height:10px;border-radius:5px;
 margin-right:4px;vertical-align:-1px}
.note{background:#fff8c5;border:1px solid #d4a72c;padding:6px 10px;
 border-radius:4px;font-size:12px}
)css";

// Sets the body's data-report once every chart holds what it says.
constexpr char kScript[] = R"js(
(function () {
  var problems = [];
  window.addEventListener('error', function (e) {
    problems.push('script error: ' + e.message);
    document.body.setAttribute('data-report', 'error: ' + problems.join('; '));
  });
  try {
    var charts = document.querySelectorAll('svg.chart');
    for (var i = 0; i < charts.length; i++) {
      var chart = charts[i];
      var want = Number(chart.getAttribute('data-points'));
      var got = chart.querySelectorAll('.pt').length;
      chart.setAttribute('data-drawn', String(got));
      if (want !== got) problems.push(chart.id + ': ' + got + ' of ' + want);
      if (!(chart.getBoundingClientRect().width > 0))
        problems.push(chart.id + ': not laid out');
    }
    document.body.setAttribute('data-charts', String(charts.length));
  } catch (e) {
    problems.push('script error: ' + e);
  }
  document.body.setAttribute('data-report', problems.length ?
      'error: ' + problems.join('; ') : 'rendered');
})();
)js";

struct StatusStyle {
  const char* css;
  const char* name;
};

// By proto::MeasureStatus.
StatusStyle StyleOf(proto::MeasureStatus status) {
  switch (status) {
    case proto::MEASURE_OK:
      return {"s-ok", "ok"};
    case proto::MEASURE_WRONG_RESULT:
      return {"s-wrong", "wrong result"};
    case proto::MEASURE_RUN_ERROR:
      return {"s-crash", "crashed"};
    case proto::MEASURE_TIMEOUT:
      return {"s-timeout", "timed out"};
    case proto::MEASURE_BUILD_ERROR:
      return {"s-build", "build error"};
    default:
      return {"s-build", "unknown status"};
  }
}

// The y value of a median: GFLOP/s, or runs per second when the task's
// flops are unknown.
double Speed(const TaskData& task, double median_s) {
  return task.flops > 0 ? task.Gflops(median_s)
                        : (median_s > 0 ? 1 / median_s : 0);
}
const char* SpeedUnit(const TaskData& task) {
  return task.flops > 0 ? "GFLOP/s" : "runs/s";
}

// Seconds since `origin_ms` in a unit that suits the span.
struct TimeAxis {
  double divisor = 1;
  const char* unit = "s";
  explicit TimeAxis(double span_s) {
    if (span_s > 7200) {
      divisor = 3600, unit = "h";
    } else if (span_s > 120) {
      divisor = 60, unit = "min";
    }
  }
};

std::string Tip(const TaskData& task, const TaskRecord& r) {
  std::string tip = absl::StrCat("trial ", r.trial, ", record ", r.record.id,
                                 ": ", StyleOf(r.record.status).name);
  if (r.record.median_s) {
    absl::StrAppend(&tip, ", ", Seconds(*r.record.median_s), ", ",
                    Number(Speed(task, *r.record.median_s)), " ",
                    SpeedUnit(task));
  }
  absl::StrAppend(&tip, "\n", r.record.runner, ", job ", r.record.job, ", ",
                  UtcTime(r.record.measured_ms), "\nprogram ",
                  r.record.structural_hash);
  return tip;
}

// Best speed against trials or wall time, every drawn candidate a point.
std::string SpeedChart(const TaskData& task, size_t index, bool by_time) {
  const int64_t last_ms = task.records.empty()
                              ? task.first_ms
                              : task.records.back().record.measured_ms;
  const TimeAxis axis(static_cast<double>(last_ms - task.first_ms) / 1e3);
  auto x_of = [&](const TaskRecord& r) {
    return by_time ? static_cast<double>(r.record.measured_ms - task.first_ms) /
                         1e3 / axis.divisor
                   : static_cast<double>(r.trial);
  };
  SvgChart chart(
      absl::StrCat("Best ", SpeedUnit(task), " by ",
                   by_time ? "wall time" : "trial"),
      by_time ? absl::StrCat("time since the first record (", axis.unit, ")")
              : "trial",
      SpeedUnit(task));
  chart.IncludeY(0);
  chart.IncludeX(by_time ? 0 : 1);
  std::vector<std::pair<double, double>> curve;
  for (const CurvePoint& p : task.best_curve) {
    curve.emplace_back(
        by_time ? static_cast<double>(p.measured_ms - task.first_ms) / 1e3 /
                      axis.divisor
                : static_cast<double>(p.trial),
        Speed(task, p.median_s));
  }
  if (!curve.empty()) chart.AddStepLine(curve, "best", /*to_edge=*/true);
  if (task.default_median_s) {
    chart.AddHorizontalLine(
        Speed(task, *task.default_median_s), "default",
        absl::StrCat("default schedule ", Seconds(*task.default_median_s)));
  }
  for (const TaskRecord& r : task.records) {
    if (!r.drawn) continue;
    const double y = r.record.median_s ? Speed(task, *r.record.median_s) : 0;
    chart.AddPoint(x_of(r), y, StyleOf(r.record.status).css, Tip(task, r));
  }
  return chart.Render(
      absl::StrCat("task-", index, by_time ? "-time" : "-trials"));
}

std::string AccuracyChart(const TaskData& task, size_t index) {
  SvgChart chart("Cost model: pairwise accuracy per batch", "batch",
                 "accuracy");
  chart.IncludeY(0);
  chart.IncludeY(1);
  chart.IncludeX(1);
  chart.IncludeX(static_cast<double>(std::max<size_t>(1, task.batches.size())));
  chart.AddHorizontalLine(0.5, "chance", "chance");
  for (size_t b = 0; b < task.batches.size(); ++b) {
    const db::TuningBatch& batch = task.batches[b];
    if (!batch.accuracy) continue;
    chart.AddPoint(
        static_cast<double>(b + 1), *batch.accuracy, "s-acc",
        absl::StrCat("batch ", b + 1, " (job ", batch.job, ", its batch ",
                     batch.index, "): accuracy ", Number(*batch.accuracy, 3),
                     " on ", batch.trials, " trials, after training on ",
                     batch.trained_on, " rows; ", UtcTime(batch.finished_ms)));
  }
  return chart.Render(absl::StrCat("task-", index, "-accuracy"));
}

std::string Cell(const std::string& text, const char* css = nullptr) {
  return css ? absl::StrCat("<td class=\"", css, "\">", HtmlEscape(text),
                            "</td>")
             : absl::StrCat("<td>", HtmlEscape(text), "</td>");
}

std::string ProvenanceRow(const char* what, const TaskData& task,
                          const db::RecordSummary& r) {
  return absl::StrCat(
      "<tr><th>", what, "</th>",
      Cell(r.median_s ? Seconds(*r.median_s) : "-", "num"),
      Cell(r.median_s ? Number(Speed(task, *r.median_s)) : "-", "num"),
      Cell(r.runner), Cell(r.lathe_version), Cell(r.job),
      Cell(UtcTime(r.measured_ms)), Cell(absl::StrCat(r.id), "num"),
      Cell(r.structural_hash), "</tr>\n");
}

std::string TaskSection(const TaskData& task, size_t index) {
  std::string html = absl::StrCat(
      "<section class=\"task\" id=\"task-", index, "\">\n<h2>",
      HtmlEscape(task.workload), "</h2>\n<p class=\"meta\">target ",
      HtmlEscape(task.target), " · key ", HtmlEscape(task.workload_key),
      task.flops > 0
          ? absl::StrCat(" · ", Number(static_cast<double>(task.flops)),
                         " flops")
          : " · flops unknown (runs per second shown)",
      "</p>\n<p>", task.trials, " trials; ", task.by_status[proto::MEASURE_OK],
      " ok, ", task.by_status[proto::MEASURE_WRONG_RESULT], " wrong, ",
      task.by_status[proto::MEASURE_RUN_ERROR], " crashed, ",
      task.by_status[proto::MEASURE_TIMEOUT], " timed out, ",
      task.by_status[proto::MEASURE_BUILD_ERROR], " build errors (of ",
      task.records.size(), " records, the default schedule's and ",
      "re-measurements included)");
  if (task.default_median_s && !task.best_curve.empty()) {
    absl::StrAppend(
        &html, "; the best trial runs at ",
        Number(*task.default_median_s / task.best_curve.back().median_s, 3),
        "x the default schedule's speed");
  }
  absl::StrAppend(&html, ".</p>\n");
  if (static_cast<int64_t>(task.records.size()) < task.records_total) {
    absl::StrAppend(&html, "<p class=\"note\">Only the first ",
                    task.records.size(), " of ", task.records_total,
                    " records were read (the report bounds what it reads per "
                    "task and in all); the later ones are not shown.</p>\n");
  }
  if (task.drawn < task.trials) {
    absl::StrAppend(&html, "<p class=\"note\">", task.drawn, " of ",
                    task.trials,
                    " trials are drawn (spread evenly); the best-so-far line "
                    "uses all of them.</p>\n");
  }
  absl::StrAppend(&html, "<div class=\"charts\">\n",
                  SpeedChart(task, index, false), SpeedChart(task, index, true),
                  AccuracyChart(task, index), "</div>\n");
  int64_t untrained = 0;
  for (const db::TuningBatch& b : task.batches) untrained += b.accuracy ? 0 : 1;
  absl::StrAppend(&html, "<p class=\"meta\">", task.batches.size(),
                  " batches recorded",
                  untrained > 0 ? absl::StrCat(", ", untrained,
                                               " measured before the model "
                                               "was trained (no accuracy)")
                                : "",
                  task.batches.empty()
                      ? " (a database from before schema version 4, or records "
                        "that came without their batches)"
                      : "",
                  ".</p>\n");
  absl::StrAppend(&html,
                  "<h3>Provenance</h3>\n<table><tr><th></th><th class=\"num\">"
                  "median</th><th class=\"num\">",
                  SpeedUnit(task),
                  "</th><th>runner</th><th>lathe</th><th>job</th><th>"
                  "measured</th><th class=\"num\">record</th><th>program</th>"
                  "</tr>\n");
  if (task.best) {
    absl::StrAppend(&html, ProvenanceRow("best", task, *task.best));
  } else {
    absl::StrAppend(&html,
                    "<tr><th>best</th><td colspan=\"8\">none: no record "
                    "measured ok</td></tr>\n");
  }
  for (auto it = task.records.rbegin(); it != task.records.rend(); ++it) {
    if (it->kind == RecordKind::kDefault &&
        it->record.status == proto::MEASURE_OK) {
      absl::StrAppend(&html, ProvenanceRow("default", task, it->record));
      break;
    }
  }
  absl::StrAppend(&html, "</table>\n</section>\n");
  return html;
}

std::string ModelSection(const ModelData& model, size_t index,
                         const std::vector<TaskData>& tasks) {
  std::string html = absl::StrCat(
      "<section class=\"model\" id=\"model-", index, "\">\n<h2>Model ",
      HtmlEscape(model.name), "</h2>\n<p class=\"meta\">target ",
      HtmlEscape(model.target.empty() ? "(no records)" : model.target), " · ",
      model.shares.size(),
      " tasks</p>\n<p>Estimated latency (Σ weight × "
      "best median, the default schedule's before a task's first trial): ");
  if (model.latency_s) {
    absl::StrAppend(&html, "<b>", HtmlEscape(Seconds(*model.latency_s)),
                    "</b>");
    if (model.default_latency_s) {
      absl::StrAppend(
          &html, " now, ", HtmlEscape(Seconds(*model.default_latency_s)),
          " with the default schedules (",
          Number(*model.default_latency_s / *model.latency_s, 3), "x)");
    }
  } else {
    absl::StrAppend(&html,
                    "unknown (a task has neither a trial nor a default "
                    "schedule's median)");
  }
  absl::StrAppend(&html, ".</p>\n<div class=\"charts\">\n");
  int64_t origin = model.latency.empty() ? 0 : model.latency.front().at_ms;
  const TimeAxis axis(
      model.latency.empty()
          ? 0
          : static_cast<double>(model.latency.back().at_ms - origin) / 1e3);
  SvgChart latency(
      "Estimated model latency over time",
      absl::StrCat("time since the first record (", axis.unit, ")"),
      "latency (ms)");
  latency.IncludeY(0);
  std::vector<std::pair<double, double>> line;
  for (const ModelData::Point& p : model.latency) {
    const double x = static_cast<double>(p.at_ms - origin) / 1e3 / axis.divisor;
    line.emplace_back(x, p.latency_s * 1e3);
    latency.AddPoint(
        x, p.latency_s * 1e3, "s-lat",
        absl::StrCat(Seconds(p.latency_s), " at ", UtcTime(p.at_ms)));
  }
  if (!line.empty()) latency.AddStepLine(line, "latency", /*to_edge=*/true);
  if (model.default_latency_s) {
    latency.AddHorizontalLine(*model.default_latency_s * 1e3, "default",
                              "default schedules");
  }
  absl::StrAppend(&html,
                  latency.Render(absl::StrCat("model-", index, "-latency")));
  std::vector<std::pair<std::string, double>> bars;
  double total = 0;
  for (const ModelData::Share& s : model.shares) {
    const std::optional<double> now = s.best_s ? s.best_s : s.default_s;
    if (now) total += s.weight * *now;
  }
  for (const ModelData::Share& s : model.shares) {
    const std::optional<double> now = s.best_s ? s.best_s : s.default_s;
    if (now && total > 0)
      bars.emplace_back(s.workload, s.weight * *now / total * 100);
  }
  absl::StrAppend(
      &html,
      RenderBarChart(absl::StrCat("model-", index, "-share"),
                     "Share of the estimated latency per task", bars, "%"),
      "</div>\n<table><tr><th>task</th><th class=\"num\">weight</th>"
      "<th class=\"num\">best</th><th class=\"num\">default</th>"
      "<th class=\"num\">weight × now</th></tr>\n");
  for (const ModelData::Share& s : model.shares) {
    const std::optional<double> now = s.best_s ? s.best_s : s.default_s;
    std::string name = HtmlEscape(s.workload);
    if (s.task >= 0 && static_cast<size_t>(s.task) < tasks.size())
      name = absl::StrCat("<a href=\"#task-", s.task, "\">", name, "</a>");
    absl::StrAppend(&html, "<tr><td class=\"form\">", name, "</td>",
                    Cell(Number(s.weight), "num"),
                    Cell(s.best_s ? Seconds(*s.best_s) : "-", "num"),
                    Cell(s.default_s ? Seconds(*s.default_s) : "-", "num"),
                    Cell(now ? Seconds(s.weight * *now) : "unknown", "num"),
                    "</tr>\n");
  }
  absl::StrAppend(&html, "</table>\n</section>\n");
  return html;
}

std::string SummaryTable(const std::vector<TaskData>& tasks) {
  std::string html =
      "<table><tr><th>task</th><th>target</th><th class=\"num\">trials</th>"
      "<th class=\"num\">ok</th><th class=\"num\">wrong</th>"
      "<th class=\"num\">crashed</th><th class=\"num\">timed out</th>"
      "<th class=\"num\">build errors</th><th class=\"num\">best</th>"
      "<th class=\"num\">default</th><th class=\"num\">speed-up</th>"
      "<th class=\"num\">last accuracy</th></tr>\n";
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TaskData& t = tasks[i];
    std::optional<double> best, accuracy;
    if (!t.best_curve.empty()) best = t.best_curve.back().median_s;
    for (const db::TuningBatch& b : t.batches)
      if (b.accuracy) accuracy = b.accuracy;
    absl::StrAppend(
        &html, "<tr><td class=\"form\"><a href=\"#task-", i, "\">",
        HtmlEscape(t.workload), "</a></td>", Cell(t.target),
        Cell(absl::StrCat(t.trials), "num"),
        Cell(absl::StrCat(t.by_status[proto::MEASURE_OK]), "num"),
        Cell(absl::StrCat(t.by_status[proto::MEASURE_WRONG_RESULT]), "num"),
        Cell(absl::StrCat(t.by_status[proto::MEASURE_RUN_ERROR]), "num"),
        Cell(absl::StrCat(t.by_status[proto::MEASURE_TIMEOUT]), "num"),
        Cell(absl::StrCat(t.by_status[proto::MEASURE_BUILD_ERROR]), "num"),
        Cell(best ? absl::StrCat(Number(Speed(t, *best)), " ", SpeedUnit(t))
                  : "-",
             "num"),
        Cell(t.default_median_s
                 ? absl::StrCat(Number(Speed(t, *t.default_median_s)), " ",
                                SpeedUnit(t))
                 : "-",
             "num"),
        Cell(best && t.default_median_s
                 ? absl::StrCat(Number(*t.default_median_s / *best, 3), "x")
                 : "-",
             "num"),
        Cell(accuracy ? Number(*accuracy, 3) : "-", "num"), "</tr>\n");
  }
  absl::StrAppend(&html, "</table>\n");
  return html;
}

}  // namespace

std::string RenderReportHtml(const ReportData& data) {
  std::string html = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, "
      "initial-scale=1\">\n<title>Lathe report: ",
      HtmlEscape(data.db_path), "</title>\n<style>", kStyle,
      "</style>\n</head>\n<body>\n<header><h1>Lathe tuning report</h1>\n<p>",
      HtmlEscape(data.db_path),
      data.job.empty() ? std::string(" · every job")
                       : absl::StrCat(" · job ", HtmlEscape(data.job)),
      " · ", data.tasks.size(), " tasks · generated ",
      HtmlEscape(UtcTime(data.generated_ms)), "</p></header>\n<main>\n");
  absl::StrAppend(
      &html,
      "<p class=\"legend\"><span><i class=\"s-ok\" "
      "style=\"background:#2da44e\"></i>ok</span><span><i "
      "style=\"background:#fb8500\"></i>wrong result</span><span><i "
      "style=\"background:#cf222e\"></i>crashed</span><span><i "
      "style=\"background:#8250df\"></i>timed out</span><span><i "
      "style=\"background:#8c959f\"></i>build error</span><span><i "
      "style=\"background:#1f6feb;border-radius:0;height:3px\"></i>best so "
      "far</span><span><i style=\"background:#bf8700;border-radius:0;height:"
      "2px\"></i>default schedule</span> Failed candidates sit on the zero "
      "line; hover a point for its record.</p>\n");
  if (data.tasks_total > static_cast<int64_t>(data.tasks.size())) {
    absl::StrAppend(&html, "<p class=\"note\">Only ", data.tasks.size(), " of ",
                    data.tasks_total, " tasks are shown (bound ",
                    data.options.max_tasks,
                    "); give --job to see one job's.</p>\n");
  }
  if (data.tasks.empty()) {
    absl::StrAppend(&html, "<section><p>No records",
                    data.job.empty() ? "" : " of this job",
                    " in the database.</p></section>\n");
  } else {
    absl::StrAppend(&html, "<section><h2>Tasks</h2>\n",
                    SummaryTable(data.tasks), "</section>\n");
  }
  for (size_t i = 0; i < data.models.size(); ++i)
    absl::StrAppend(&html, ModelSection(data.models[i], i, data.tasks));
  for (size_t i = 0; i < data.tasks.size(); ++i)
    absl::StrAppend(&html, TaskSection(data.tasks[i], i));
  absl::StrAppend(&html, "</main>\n<script>", kScript,
                  "</script>\n</body>\n</html>\n");
  return html;
}

}  // namespace lathe::report
