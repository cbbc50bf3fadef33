// CPU targets as LLVM knows them: parsing a target string, this machine as a
// target, and whether a target's code runs here.
//
// A target is a canonical string, e.g.
//   llvm -mcpu=znver4 -mattr=-mwaitx,-pku -num-threads=2
// (see compiler/target/target.h). Parsing checks the CPU name and features
// against LLVM's x86 tables and fills in the features the target enables
// (Target::resolved_features), so the parts above the code generator read
// them without LLVM.
//
// `host` resolves at run time to this machine: its CPU name and its actual
// features (never a guess: a machine without AVX-512 gets no AVX-512).
// CheckRunnableHere refuses a target whose features this machine lacks, so
// Lathe never executes illegal instructions.
// Tests: tests/compiler/codegen/cpu_target_test.cc.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/target/target.h"

namespace lathe {

// Parses "llvm [-mcpu=NAME] [-mattr=+a,-b] [-num-threads=N]" or
// "host [-num-threads=N]"; "cuda ..." goes to the CUDA back end
// (compiler/codegen/cuda/cuda_target.h). InvalidArgument naming the bad part
// otherwise. "host" gets this machine's CPU and features, and as many threads
// as this process may use CPUs (AllowedCpuCount, as `nproc` counts) unless
// -num-threads is given.
absl::StatusOr<Target> ParseTarget(const std::string& text);

// This machine, with num_threads threads.
Target HostTarget(int num_threads);

// Ok when code for the target runs on this machine; FailedPrecondition naming
// every feature the target needs and this machine lacks otherwise, and
// InvalidArgument for a kind other than "llvm".
absl::Status CheckRunnableHere(const Target& target);

}  // namespace lathe
