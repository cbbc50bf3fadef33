// Whether this machine can measure a target's kernels: run them at all
// (CheckRunnableHere: its CPU features) and time them as they would run on
// the target, every thread on a CPU of its own; for a cuda target, on a GPU
// of its architecture (cuda/device_target.h). And the worker that measures
// them (WorkerFor).
//
// Why: a kernel of more threads than this process may use CPUs still runs,
// but its threads take turns (bench/README.md, "Why the code is as it is"):
// its timings say nothing of the target, and a tuning run or a runner would
// store them as if they did.
// Tests: tests/runner/measurable_target_test.cc.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/codegen/cpu_target.h"
#include "runner/local_runner.h"

namespace lathe::runner {

// OK when `target` runs here and its threads fit in `cpus` CPUs; otherwise
// an error naming the target and what is missing. `cpus` <= 0: those of
// this process (AllowedCpuCount, compiler/target/target.h).
// A cuda target: the driver's errors when there is no GPU.
absl::Status CheckMeasurableHere(const Target& target, int cpus = 0);

// The device that measures `target` here, as records name it: this CPU
// (HostDeviceDescription, compiler/target/target_info.h), or for a cuda
// target the first GPU ("NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, driver
// 13.0)"; "unknown GPU" without one).
std::string MeasuringDeviceDescription(const Target& target);

// Options of a LocalRunner measuring `target` with `worker_program` (e.g.
// {"/proc/self/exe", "runner-worker"}, a program that serves CPU kernels
// as is and CUDA kernels given "--cuda"): for a cuda target, the program
// with "--cuda" and no address-space limit (the CUDA driver reserves far
// more address space than a limit that bounds a CPU kernel's memory would
// allow, and fails to initialize under one).
LocalRunnerOptions WorkerFor(const Target& target,
                             std::vector<std::string> worker_program);

}  // namespace lathe::runner
