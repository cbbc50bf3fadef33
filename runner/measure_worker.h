// The worker side of local measurement: a process that builds, checks and
// times candidates for a LocalRunner (local_runner.h), one request at a
// time, for as long as its input lasts (startup is expensive: LLVM).
//
// Per request (MeasureCandidate):
//  1. Build (candidate_build.h): parse the workload and the target (which
//     must run here), replay the trace (an absent trace: the default
//     schedule), lower, and compile with the JIT. Any failure:
//     MEASURE_BUILD_ERROR with the message. The worker loop builds the
//     request's build_ahead traces beside the measurement, on a CPU the
//     kernel leaves free, or, with none free, beside its next build on the
//     spot (build_ahead.h), and takes a build done ahead.
//  2. Check the kernel's output against the reference on random inputs from
//     check_seed (a kernel that takes layout-free inputs packed,
//     CandidateBuild::prepacks, gets them packed by its prepacks first): a
//     mismatch is MEASURE_WRONG_RESULT; the kernel's own error is
//     MEASURE_RUN_ERROR. A kernel that passed on the same check_seed earlier in
//     this process (the JIT returns the same code for the same program) is not
//     checked again: check_reused. A request with a fault to inject is always
//     checked.
//  3. Time it (its prepacks, if any, run once before: only the kernel is
//     timed): TimeRepeatedly (compiler/measure/timing.h), or one call per
//     sample after a cache flush when flush_cache (cache_flush.h), after a
//     warm-up of at least one call and 10 ms. Timing
//     options come from the request: min_time_s (< 0 counts as 0),
//     min_repeats (at least 1), max_repeats (<= 0: 100000; never below
//     min_repeats). times_s holds every sample, in seconds per call.
//  A build-only request (MeasureRequest.build_only) stops after step 1: its
//  trace and its build_ahead traces are built on every CPU at once and kept
//  for the requests that follow (BuildAhead::BuildAll).
//  A std::bad_alloc anywhere (the process's memory limit, RLIMIT_AS, set by
//  the runner) is MEASURE_RUN_ERROR "exceeded the memory limit of N MiB".
//  structural_hash is set whenever the trace replayed.
//  inject_fault (tests only) makes the worker misbehave after the build:
//  "crash", "hang", "wrong_result", "oom", "unpacked_weights" (a kernel
//  that takes packed inputs is handed them unpacked in the check), or try,
//  where the kernel would run, what a confined worker forbids: "socket" opens a
//  network socket, "open_file" a file (MEASURE_RUN_ERROR when refused;
//  runner/worker_sandbox.h).
//
// Threads: PrepareMeasurementProcess makes the runtime pin thread i of every
// parallel loop to the i-th CPU this process may run on (the caller to the
// first), and pins the calling thread there too, so a kernel of the target's
// N threads runs on the first N allowed CPUs, always the same ones.
// Tests: tests/runner/measure_worker_test.cc (in process), and through
// processes in tests/runner/local_runner_test.cc.
#pragma once

#include "absl/status/status.h"
#include "proto/measure.pb.h"
#include "runner/build_ahead.h"
#include "runner/worker_loop.h"

namespace lathe::runner {

// Builds, checks and times one candidate in this process, as described
// above. No sandbox: the faults "crash" and "hang" do what they say to the
// calling process (only a worker process should be asked for them).
// With `ahead`, the build is taken from it (done ahead, or built now).
proto::MeasureResult MeasureCandidate(const proto::MeasureRequest& request,
                                      BuildAhead* ahead = nullptr);

// Sets up this process for measurement (threads pinned, see above). Call
// once, before any other use of the runtime (lathe_runtime.h) and before
// other threads exist: it changes the environment.
void PrepareMeasurementProcess();

// The worker's main loop (worker_loop.h: its channel, confinement and exit
// codes): PrepareMeasurementProcess, then MeasureCandidate for each
// request, with builds ahead on the CPUs this process may use. A confined
// worker builds and runs a small kernel before its filter is installed, so
// that what the first build loads is loaded.
int RunMeasureWorker(int in_fd, int out_fd,
                     const WorkerConfinement& confinement = {});

}  // namespace lathe::runner
