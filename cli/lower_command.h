// `lathe lower`: print a workload's program, as built or after a trace.
//
//   lathe lower matmul:M=64,N=64,K=64
//   lathe lower matmul:M=64,N=64,K=64 --trace schedule.json [--show-trace]
//   lathe lower matmul:M=64,N=64,K=64 --default [--vector-width 8] [--lowered]
//   lathe lower --expr "C[i,j] += A[i,k] * B[k,j]" --dims i=8,j=8,k=8
//
// Tests: tests/cli/lower_commands_test.sh and tests/lit/ (run the built
// binary).
#pragma once

#include <CLI/CLI.hpp>

namespace lathe::cli {

void AddLowerCommand(CLI::App& app);

}  // namespace lathe::cli
