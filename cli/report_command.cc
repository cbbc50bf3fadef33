#include "cli/report_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "cli/model_args.h"
#include "report/report_file.h"

namespace lathe::cli {
namespace {

struct ReportCommandOptions {
  std::string db_path = "lathe.db";
  std::string out;
  std::string job;
  ModelArgs model;
  int64_t max_tasks = 200;
  int64_t max_drawn = 2000;
};

absl::Status RunReport(const ReportCommandOptions& options) {
  report::ReportOptions report_options;
  report_options.job = options.job;
  report_options.max_tasks = options.max_tasks;
  report_options.max_records_drawn = options.max_drawn;
  if (!options.model.path.empty()) {
    if (!IsModelPath(options.model.path)) {
      return absl::InvalidArgumentError(absl::StrCat(
          options.model.path, ": not a model (an ONNX file, MODEL.onnx)"));
    }
    absl::StatusOr<std::vector<ModelTaskWorkload>> tasks =
        LoadModelTasks(options.model);
    if (!tasks.ok()) return tasks.status();
    report_options.model = ModelReportInput(options.model.path, *tasks);
  } else if (!options.model.shapes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--shape ", options.model.shapes.front(),
        ": --shape is for a model (MODEL.onnx), and no model is given"));
  }
  const std::string out = options.out.empty()
                              ? report::DefaultReportPath(options.db_path)
                              : options.out;
  if (absl::Status st =
          report::WriteReport(options.db_path, report_options, out);
      !st.ok()) {
    return st;
  }
  std::printf("report: %s\n", out.c_str());
  return absl::OkStatus();
}

}  // namespace

report::ModelInput ModelReportInput(
    const std::string& model_path,
    const std::vector<ModelTaskWorkload>& tasks) {
  report::ModelInput input;
  input.name = model_path;
  for (const ModelTaskWorkload& t : tasks) {
    input.tasks.push_back(
        {t.workload.CanonicalForm(), static_cast<double>(t.task.count)});
  }
  return input;
}

void AddReportCommand(CLI::App& app) {
  auto options = std::make_shared<ReportCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "report",
      "write the tuning report of a database as one HTML page: per task the "
      "best GFLOP/s by trial and by time, every candidate, the default "
      "schedule, the cost model's accuracy; per model its estimated latency");
  command->add_option("model", options->model.path,
                      "a model (MODEL.onnx): add its estimated latency over "
                      "time and each task's share, and show its tasks only");
  options->model.AddShapeOption(command);
  command->add_option("--db", options->db_path,
                      "the database (default lathe.db)");
  command->add_option(
      "-o,--output", options->out,
      "the page to write (default: beside the database, NAME.report.html)");
  command->add_option("--job", options->job,
                      "only this job's records (default: every record)");
  command
      ->add_option("--max-tasks", options->max_tasks,
                   "show at most this many tasks (default 200)")
      ->check(WholeNumber(1, 100000));
  command
      ->add_option("--max-points", options->max_drawn,
                   "draw at most this many candidates per task, spread evenly "
                   "(default 2000)")
      ->check(WholeNumber(1, 1000000));
  SetAction(command, [options] { return RunReport(*options); });
}

}  // namespace lathe::cli
