// `lathe tune`: the embedded default (docs/architecture.md, "The embedded
// default"). The search runs in this process, candidates are measured by a
// local worker process (`lathe runner-worker`, hidden), results go to the
// database (lathe.db). Ctrl-C stops after the candidate being measured with
// everything committed; running again continues from the database. The
// progress display is in tune_progress.h, the worker's entry in
// runner_worker_command.h.
// Tests: tests/cli/tune_commands_test.sh.
#pragma once

#include <CLI/CLI.hpp>

namespace lathe::cli {

void AddTuneCommand(CLI::App& app);

}  // namespace lathe::cli
