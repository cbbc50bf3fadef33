// `lathe bench`: compile one kernel in-process (JIT), check it against the
// reference, and time it (compiler/measure/timing.h): median and spread of
// the samples, GFLOP/s, compile time.
//
//   lathe bench matmul:M=1024,N=1024,K=1024 --threads 1
//   lathe bench matmul:M=256,N=256,K=256 --trace best.json --json
//
// Without --trace the default schedule is used. A target whose features this
// machine lacks is refused (it would run illegal instructions); a kernel that
// does not match the reference fails the command with the first mismatch.
// Tests: tests/cli/bench_commands_test.sh (runs the built binary).
#pragma once

#include <CLI/CLI.hpp>

namespace lathe::cli {

void AddBenchCommand(CLI::App& app);

}  // namespace lathe::cli
