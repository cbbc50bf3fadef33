#include "cli/model_tasks.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/graph/kernel_partition.h"
#include "compiler/graph/pipeline.h"
#include "compiler/workload/spec.h"

namespace lathe::cli {

bool IsModelPath(const std::string& argument) {
  return absl::EndsWithIgnoreCase(argument, ".onnx");
}

absl::StatusOr<bool> ModelArgument(const std::vector<std::string>& arguments,
                                   ModelArgs& model) {
  for (const std::string& argument : arguments) {
    if (!IsModelPath(argument)) continue;
    if (arguments.size() > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(argument,
                       ": a model goes alone; give no workload spec or other "
                       "model beside it (",
                       arguments.size(), " arguments given)"));
    }
    model.path = argument;
    return true;
  }
  if (!model.shapes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--shape ", model.shapes.front(),
        ": --shape is for a model (MODEL.onnx), and no model is given"));
  }
  return false;
}

absl::StatusOr<std::vector<ModelTaskWorkload>> LoadModelTasks(
    const ModelArgs& model) {
  absl::StatusOr<graph::Graph> graph = model.Import();
  if (!graph.ok()) return graph.status();
  absl::StatusOr<graph::KernelPartition> partition =
      graph::RunPassesAndPartition(*graph);
  if (!partition.ok()) return partition.status();
  std::vector<ModelTaskWorkload> tasks;
  for (graph::ModelTask& task : graph::DistinctTasks(*partition)) {
    absl::StatusOr<Workload> workload = ParseWorkloadSpec(task.workload);
    if (!workload.ok()) {
      return absl::InternalError(
          absl::StrCat("task ", task.workload,
                       " is not a valid spec: ", workload.status().message()));
    }
    tasks.push_back({std::move(task), *std::move(workload)});
  }
  return tasks;
}

}  // namespace lathe::cli
