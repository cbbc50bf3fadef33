// The tuning service's client commands: `lathe submit`, `jobs`, `watch`,
// `runners`, `cancel` (each call authenticated with the shared token).
// Tests: tests/tuner/service/service_integration_test.sh.
#pragma once

#include <CLI/CLI.hpp>

namespace lathe::cli {

void AddServiceClientCommands(CLI::App& app);

}  // namespace lathe::cli
