// The measuring worker of CUDA candidates: what `lathe runner-worker --cuda`
// (and lathe-runner-worker --cuda, lathe-gpu-check --worker) runs for a
// LocalRunner (runner/local_runner.h) whose target is cuda. It serves
// requests through ServeMeasureRequests (runner/worker_loop.h: channel,
// confinement, exit codes) with a CudaMeasurer (cuda_measurer.h) on this
// machine's first device (the first of CUDA_VISIBLE_DEVICES).
//
//  - Start: the driver loaded and the device's context created, NVRTC
//    loaded, and one small kernel built, checked and timed, so that what
//    the first request needs is loaded before the confinement's filter is
//    installed. No driver, no device or no NVRTC: the worker does not start
//    (exit code 5, the reason on stderr), which the runner reports.
//  - Each request: its target must be a cuda target that this device
//    measures as the target (device_target.h), else MEASURE_BUILD_ERROR
//    naming both. The measurer of the request's target (made on first use;
//    one kept at a time) builds the candidate with NVRTC in this process —
//    the runner's timeout per request bounds a compilation that does not
//    end — then loads, checks and times it. The request's build_ahead
//    traces are built meanwhile on the other CPUs (cuda_build_ahead.h); a
//    build-only request builds its trace and hints and waits for them.
//  - A candidate that faults (illegal address, launch failure) leaves the
//    CUDA context unusable: its result is MEASURE_RUN_ERROR, and the runner
//    replaces the worker before the next candidate, so the fault takes down
//    nothing else.
//  - inject_fault (tests only), after the build: "crash" (abort), "hang",
//    "illegal_address" (a kernel that writes to address 0 runs on the
//    device), "open_file" (opens /proc/self/status for writing: refused by
//    the confinement).
// Tests: tests/runner/cuda/cuda_worker_test.cc (through real worker
// processes; those that need a device skip without one).
#pragma once

#include "runner/worker_loop.h"

namespace lathe::runner {

// The worker's loop as described above; returns its exit code.
int RunCudaMeasureWorker(int in_fd, int out_fd,
                         const WorkerConfinement& confinement = {});

}  // namespace lathe::runner
