// The loop every measuring worker process runs, whatever it measures
// (measure_worker.h: CPU kernels; cuda/cuda_worker.h: CUDA kernels): the
// channel to its LocalRunner (worker_protocol.h), its confinement
// (worker_sandbox.h), and the end of the worker when its runner is gone.
//
// ServeMeasureRequests, in order:
//  1. SIGPIPE ignored (a runner that went away makes a write fail, not kill
//     the worker); when out_fd is stdout, the channel moves to a new
//     descriptor and stdout is pointed at stderr, so that nothing else
//     printed can corrupt the channel.
//  2. confinement.before_threads, while the process has one thread.
//  3. A watch on the parent: the worker exits (_exit(3)) when the process
//     that started it is gone, so a hung candidate cannot outlive its tuner.
//  4. `start`: loads what measuring needs (a JIT, a device, their threads)
//     and returns the function that measures one request. An error ends the
//     worker with exit code 5 and the message on stderr ("lathe worker:
//     ..."), before the hello: the runner reports that it did not start.
//  5. confinement.before_requests: an error ends the worker (exit code 4).
//  6. The hello, then for each request an acknowledgement and a result, until
//     in_fd ends (exit code 0) or the channel breaks (exit code 2). A frame
//     that is not a MeasureRequest gets a MEASURE_RUN_ERROR result; a failed
//     result's error ends with what the confinement refused, if anything
//     ("(the worker's sandbox refused: openat)").
// Tests: through real workers in tests/runner/worker_main_test.cc.
#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/measure.pb.h"

namespace lathe::runner {

// How a worker process is confined (runner/worker_sandbox.h); each step may
// be empty (tests that measure in their own process, platforms without it).
struct WorkerConfinement {
  // While the process has one thread, before the worker starts any.
  std::function<void()> before_threads;
  // Once the worker's threads and what it loads are ready, before the first
  // request; an error ends the worker (exit code 4) before it measures
  // anything.
  std::function<absl::Status()> before_requests;
  // What the confinement refused so far ("openat, unlink"; empty: nothing),
  // added to the error of a request that failed, so that a refusal the
  // measured code did not expect is named.
  std::function<std::string()> refused_calls;
};

using MeasureFunction =
    std::function<proto::MeasureResult(const proto::MeasureRequest&)>;

// Exit codes of a worker, besides 0 (its input ended) and 3 (its parent is
// gone).
inline constexpr int kWorkerChannelBroken = 2;
inline constexpr int kWorkerNotConfined = 4;
inline constexpr int kWorkerCannotStart = 5;

// The worker's loop, as described above; returns its exit code.
int ServeMeasureRequests(
    int in_fd, int out_fd, const WorkerConfinement& confinement,
    const std::function<absl::StatusOr<MeasureFunction>()>& start);

}  // namespace lathe::runner
