// `lathe runner`: a remote runner (runner/remote/). Tests:
// tests/tuner/service/service_integration_test.sh.
#pragma once

#include <CLI/CLI.hpp>

namespace lathe::cli {

void AddRunnerCommand(CLI::App& app);

}  // namespace lathe::cli
