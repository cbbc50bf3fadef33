// `lathe runner-worker` (hidden): the measurement worker that `lathe tune`
// starts as a child process, serving measurement requests on stdin/stdout
// (runner/measure_worker.h) until stdin closes.
// Tests: tests/cli/tune_commands_test.sh.
#pragma once

#include <CLI/CLI.hpp>

namespace lathe::cli {

void AddRunnerWorkerCommand(CLI::App& app);

}  // namespace lathe::cli
