// `lathe graph`: print a model's graph as imported, after the passes (or
// after each pass), and its partition into steps: the kernels with their
// workloads and arguments, the host steps and the views.
//
//   lathe graph model.onnx [--shape NAME=1,3,224,224] [--print-after-each]
//
// Tests: tests/cli/model_commands_test.sh and tests/lit/graph/.
#pragma once

#include <CLI/CLI.hpp>

namespace lathe::cli {

void AddGraphCommand(CLI::App& app);

}  // namespace lathe::cli
