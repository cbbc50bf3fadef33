// `lathe report`: the tuning report of a database as one self-contained HTML
// page (report/report_html.h), and the model view when a model is given.
//
//   lathe report --db tuned.db [-o report.html] [--job J] [MODEL.onnx
//                [--shape NAME=...]]
//
// The page goes beside the database by default (tuned.report.html); the
// command prints its path. `lathe tune` writes the same report of its job
// when it ends, and the daemon a job's (report/report_file.h).
// Tests: tests/report/report_browser_test.sh, tests/cli/tune_commands_test.sh.
#pragma once

#include <vector>

#include <CLI/CLI.hpp>

#include "cli/model_tasks.h"
#include "report/report_data.h"

namespace lathe::cli {

void AddReportCommand(CLI::App& app);

// A model's tasks as the report weighs them: each workload's canonical form
// with the number of times the model calls it.
report::ModelInput ModelReportInput(
    const std::string& model_path, const std::vector<ModelTaskWorkload>& tasks);

}  // namespace lathe::cli
