// Local measurement: candidates measured one at a time in a sandboxed child
// process (DESIGN.md, "Measurement").
//
// The child (a worker: runner/measure_worker.h, reached by exec'ing
// `worker_argv`) builds each candidate from (workload, trace, target) with
// Lathe's own compiler, checks its output against the reference on random
// inputs and times it. The worker runs under a memory limit and each request
// under a timeout; a worker that crashes, hangs or runs out of memory is
// killed, the candidate recorded with that status, and a fresh worker
// started for the next one. Nothing a candidate does can stop the tuner.
// Tests: tests/runner/local_runner_test.cc.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/measure.pb.h"

namespace lathe::runner {

struct LocalRunnerOptions {
  // The worker's command line, e.g. {"/proc/self/exe", "runner-worker"}.
  std::vector<std::string> worker_argv;
  double timeout_s = 60;  // per candidate: build, check and timing
  int64_t memory_limit_bytes = int64_t{8} << 30;
};

class LocalRunner {
 public:
  static absl::StatusOr<std::unique_ptr<LocalRunner>> Start(const LocalRunnerOptions& options);
  virtual ~LocalRunner() = default;
  // A result for every candidate (its status says how it ended); an error
  // only when no worker can be started at all.
  virtual absl::StatusOr<proto::MeasureResult> Measure(const proto::MeasureRequest& request) = 0;
};

}  // namespace lathe::runner
