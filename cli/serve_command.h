// `lathe serve`: the tuner daemon (tuner/service/). Tests:
// tests/tuner/service/service_integration_test.sh.
#pragma once

#include <CLI/CLI.hpp>

namespace lathe::cli {

void AddServeCommand(CLI::App& app);

}  // namespace lathe::cli
