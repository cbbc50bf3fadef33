// `lathe workloads`: the operators a workload spec can name, with their
// parameters; given specs (or --expr/--dims), what each one resolves to:
// canonical form, key, tensors.
//
//   lathe workloads [--json]
//   lathe workloads matmul:M=512,N=512,K=512 [--json]
//   lathe workloads --expr "C[i,j] += A[i,k] * B[k,j]" --dims i=64,j=64,k=64
//
// Tests: tests/compiler/workload/CMakeLists.txt runs the built binary.
#pragma once

#include <CLI/CLI.hpp>

namespace lathe::cli {

void AddWorkloadsCommand(CLI::App& app);

}  // namespace lathe::cli
