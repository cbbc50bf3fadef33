// Whether this machine can measure a target's kernels: run them at all
// (CheckRunnableHere: its CPU features) and time them as they would run on
// the target, every thread on a CPU of its own.
//
// Why: a kernel of more threads than this process may use CPUs still runs,
// but its threads take turns (bench/README.md, "Why the code is as it is"):
// its timings say nothing of the target, and a tuning run or a runner would
// store them as if they did.
// Tests: tests/runner/measurable_target_test.cc.
#pragma once

#include "absl/status/status.h"
#include "compiler/codegen/cpu_target.h"

namespace lathe::runner {

// OK when `target` runs here and its threads fit in `cpus` CPUs; otherwise
// an error naming the target and what is missing. `cpus` <= 0: those of
// this process (AllowedCpuCount, compiler/target/target.h).
absl::Status CheckMeasurableHere(const Target& target, int cpus = 0);

}  // namespace lathe::runner
