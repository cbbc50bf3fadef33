// The tuning report as one self-contained HTML page: inline CSS, charts as
// inline SVG (svg_chart.h), one small inline script, nothing fetched at view
// time. For each task: best GFLOP/s against trials and against wall time
// with every measured candidate as a point coloured by its status (ok,
// wrong result, crashed, timed out, build error; failed ones on the zero
// line) and the default schedule's median as a horizontal line; the cost
// model's pairwise accuracy per batch; the provenance of the best record
// (runner, Lathe version, job, when). For each model: its estimated
// latency over time and each task's share of it.
//
// Chart ids: task-I-trials, task-I-time, task-I-accuracy, model-I-latency,
// model-I-share (I from 0, in ReportData order). Each chart's data-points
// is its number of points (bars for a share chart): the drawn candidates,
// the batches with an accuracy, the latency points. The script checks each
// chart holds as many elements of class "pt" as it says and was laid out,
// then sets the body's data-report to "rendered" ("error: ..." otherwise,
// or when any script error happened), so a browser test can tell a page
// that loaded whole from one that did not.
//
// Every string from the database is escaped (html_text.h).
// Tests: tests/report/report_html_test.cc.
#pragma once

#include <string>

#include "report/report_data.h"

namespace lathe::report {

std::string RenderReportHtml(const ReportData& data);

}  // namespace lathe::report
