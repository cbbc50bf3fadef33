// `lathe tasks`: a model's distinct fused workloads (tuning tasks), each
// with its spec (the workload's canonical form), key, anchor operator,
// FLOPs per call and how often the model calls it.
//
//   lathe tasks model.onnx [--shape NAME=1,3,224,224] [--json]
//
// Tests: tests/cli/model_commands_test.sh and tests/lit/graph/.
#pragma once

#include <CLI/CLI.hpp>

namespace lathe::cli {

void AddTasksCommand(CLI::App& app);

}  // namespace lathe::cli
