// `lathe demo`: show a workload's program before and after a hand-written
// schedule, and check the scheduled program against the reference
// evaluation.
//
//   lathe demo [SPEC] [--seed N] [--save-trace FILE]
//
// The schedule is generic, so any workload works: inline elementwise
// stages, tile the main block's spatial loops (2-level, sampled tile sizes),
// move reduction loops between the tile levels, accumulate the tile in a
// local cache written back under the tile, parallelize the outer loop and
// vectorize the inner one. Steps that do not apply are reported and skipped.
// Tests: tests/cli/lower_commands_test.sh (runs the built binary).
#pragma once

#include <CLI/CLI.hpp>

namespace lathe::cli {

void AddDemoCommand(CLI::App& app);

}  // namespace lathe::cli
