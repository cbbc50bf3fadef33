// The tuning service's client commands: `lathe submit`, `jobs`, `watch`,
// `runners`, `cancel` (each call authenticated with the shared token).
// `lathe submit MODEL.onnx` sends a model's tasks (model_tasks.h) as specs
// weighted by their counts.
// Tests: tests/tuner/service/service_integration_test.sh,
// tests/cli/tune_model_test.sh (case submit_model).
#pragma once

#include <CLI/CLI.hpp>

namespace lathe::cli {

void AddServiceClientCommands(CLI::App& app);

}  // namespace lathe::cli
