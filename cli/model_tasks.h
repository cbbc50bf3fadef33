// A model's tuning tasks as every command that takes a model sees them: the
// ONNX file imported with its --shape values, the graph passes and the
// kernel partition that api/model.h runs (Model::Prepare), and one task per
// distinct kernel workload (compiler/graph/tasks.h) with its parsed
// workload. `lathe tasks` lists them, `lathe tune MODEL.onnx` tunes them and
// `lathe submit MODEL.onnx` sends them to a daemon, each weighted by how
// often the model calls it.
// Tests: tests/cli/tune_model_test.sh, tests/cli/model_commands_test.sh.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/model_args.h"
#include "compiler/graph/tasks.h"
#include "compiler/workload/workload.h"

namespace lathe::cli {

struct ModelTaskWorkload {
  graph::ModelTask task;  // spec (canonical form), anchor, count, flops
  Workload workload;      // the spec parsed
};

// Whether a command's positional argument names a model rather than a
// workload spec: a path ending in ".onnx" (no spec does).
bool IsModelPath(const std::string& argument);

// A command's positional arguments (`lathe tune`, `lathe submit`): either
// workload specs, or one model. Sets model.path and returns true when they
// name a model. Errors (InvalidArgument, one line): a model beside a spec
// or a second model; --shape (model.shapes) without a model.
absl::StatusOr<bool> ModelArgument(const std::vector<std::string>& arguments,
                                   ModelArgs& model);

// The model's tasks in order of first occurrence. Errors: the importer's
// (naming the file), the graph passes' and the partition's; Internal when a
// task's workload is not a valid spec (a bug of the partition).
absl::StatusOr<std::vector<ModelTaskWorkload>> LoadModelTasks(
    const ModelArgs& model);

}  // namespace lathe::cli
