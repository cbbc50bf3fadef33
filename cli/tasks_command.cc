#include "cli/tasks_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/command.h"
#include "cli/json_text.h"
#include "cli/model_args.h"
#include "cli/model_tasks.h"
#include "compiler/graph/tasks.h"

namespace lathe::cli {
namespace {

struct TasksOptions {
  ModelArgs model;
  bool json = false;
};

absl::Status RunTasks(const TasksOptions& options) {
  absl::StatusOr<std::vector<ModelTaskWorkload>> model_tasks =
      LoadModelTasks(options.model);
  if (!model_tasks.ok()) return model_tasks.status();
  std::vector<graph::ModelTask> tasks;
  double total_flops = 0;
  int calls = 0;
  std::vector<std::string> keys;
  for (const ModelTaskWorkload& t : *model_tasks) {
    tasks.push_back(t.task);
    keys.push_back(t.workload.Key());
    total_flops += t.task.flops * t.task.count;
    calls += t.task.count;
  }
  if (options.json) {
    std::vector<std::string> rows;
    for (size_t i = 0; i < tasks.size(); ++i) {
      const graph::ModelTask& task = tasks[i];
      rows.push_back(absl::StrCat("{\"spec\": ", JsonString(task.workload),
                                  ", \"key\": ", JsonString(keys[i]),
                                  ", \"anchor\": ", JsonString(task.anchor),
                                  ", \"count\": ", task.count, ", \"flops\": ",
                                  absl::StrFormat("%.17g", task.flops), "}"));
    }
    std::printf(
        "{\"model\": %s, \"kernel_calls\": %d, \"total_flops\": %s,\n"
        " \"tasks\": [\n  %s\n]}\n",
        JsonString(options.model.path).c_str(), calls,
        absl::StrFormat("%.17g", total_flops).c_str(),
        absl::StrJoin(rows, ",\n  ").c_str());
    return absl::OkStatus();
  }
  std::printf("# %zu tasks, %d kernel calls, %s flops per run\n", tasks.size(),
              calls, absl::StrFormat("%.6g", total_flops).c_str());
  std::printf("# count  flops  anchor  spec\n");
  for (const graph::ModelTask& task : tasks) {
    std::printf("%d  %s  %s  %s\n", task.count,
                absl::StrFormat("%.6g", task.flops).c_str(),
                task.anchor.empty() ? "-" : task.anchor.c_str(),
                task.workload.c_str());
  }
  return absl::OkStatus();
}

}  // namespace

void AddTasksCommand(CLI::App& app) {
  auto options = std::make_shared<TasksOptions>();
  CLI::App* command = app.add_subcommand(
      "tasks", "list a model's distinct fused workloads (its tuning tasks)");
  options->model.AddTo(command);
  command->add_flag("--json", options->json, "print the tasks as JSON");
  SetAction(command, [options] { return RunTasks(*options); });
}

}  // namespace lathe::cli
