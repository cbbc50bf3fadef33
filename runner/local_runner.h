// Local measurement: candidates measured one at a time in a sandboxed child
// process (docs/architecture.md, "Measurement").
//
// The child (a worker: runner/measure_worker.h, reached by exec'ing
// `worker_argv`; runner/worker_process.h starts and watches it) builds each
// candidate from (workload, trace, target) with Lathe's own compiler, checks
// its output against the reference on random inputs and times it. The worker
// runs under a memory limit and each request under a timeout; a worker that
// crashes, hangs or runs out of memory is killed, the candidate recorded with
// that status, and a fresh worker started for the next one. Nothing a candidate
// does can stop the tuner. Tests: tests/runner/local_runner_test.cc.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/measure.pb.h"

namespace lathe::runner {

struct LocalRunnerOptions {
  // The worker's command line, e.g. {"/proc/self/exe", "runner-worker"};
  // argv[0] is a path (not searched in PATH). The program must serve
  // RunMeasureWorker(0, 1).
  std::vector<std::string> worker_argv;
  double timeout_s = 60;  // per candidate: build, check and timing
  // The worker's address space (RLIMIT_AS, which counts what is reserved,
  // not only what is touched); <= 0: no limit.
  int64_t memory_limit_bytes = int64_t{8} << 30;
  // The CPUs the worker may run on (its kernels' threads are pinned to the
  // first ones); empty: those of this process. Runners measuring side by
  // side should get disjoint sets.
  std::vector<int> cpus;
  // How long a worker may take to start and say hello.
  double startup_timeout_s = 60;
  // Set (by a signal handler, say) while a request is out: the request is
  // abandoned at once, its worker killed, and Measure returns Cancelled.
  // Without it a Ctrl-C waits for the request: up to its timeout for a
  // hanging candidate, half of it for a batch's build-only request.
  const std::atomic<bool>* stop = nullptr;
};

// Not thread-safe: one Measure at a time (calls are serialized by a mutex;
// run several LocalRunners to measure in parallel).
class LocalRunner {
 public:
  // Starts the first worker, so that a worker that cannot start (a wrong
  // path, a program that is not a worker) is an error here. Errors:
  // InvalidArgument for options out of range; Unavailable naming the worker
  // and why it did not start.
  static absl::StatusOr<std::unique_ptr<LocalRunner>> Start(
      const LocalRunnerOptions& options);
  virtual ~LocalRunner() = default;
  // A result for every candidate (its status says how it ended); an error
  // only when no worker can be started at all. A worker that crashed, timed
  // out or reported MEASURE_RUN_ERROR is replaced before the next candidate:
  // "killed by signal 11 (SIGSEGV)" (plus the last lines of its stderr),
  // "timed out after 2.0 s", "exceeded the memory limit of 1024 MiB".
  // Cancelled when `stop` was set while the request was out (nothing
  // measured: the candidate is not to be recorded).
  virtual absl::StatusOr<proto::MeasureResult> Measure(
      const proto::MeasureRequest& request) = 0;
};

}  // namespace lathe::runner
