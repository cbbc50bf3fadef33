// The work the daemon does for a client before a job exists: parsing its
// workload specs and generating their design spaces (tuner::MakeTask), which
// for a hostile spec can take long and much memory. It runs on a thread of
// its own, never on an RPC handler's: the handler waits for it at most until
// the deadline, or until it is told to stop waiting (the client went away,
// the daemon stops), and then answers at once; the preparation it left
// finishes on its own thread and is thrown away. At most `max_running`
// preparations run at once, those left behind included, so that clients
// cannot pile them up: beyond it a submission is refused. The work given
// must not refer to the daemon (it may outlive it); a daemon's shutdown
// never waits for it.
// Tests: tests/tuner/service/job_preparation_test.cc.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/service.pb.h"
#include "tuner/search/task.h"

namespace lathe::service {

struct PreparedJob {
  proto::JobSpec spec;  // workloads in canonical form
  std::vector<tuner::Task> tasks;
};

class JobPreparer {
 public:
  static constexpr int kDefaultMaxRunning = 2;
  static constexpr absl::Duration kDefaultDeadline = absl::Seconds(30);
  JobPreparer(int max_running, absl::Duration deadline);

  // `work`'s result; ResourceExhausted (naming the limit) when max_running
  // preparations run; DeadlineExceeded (naming the deadline) when it takes
  // longer; Cancelled when `stop_waiting` (polled every few milliseconds)
  // turns true first.
  absl::StatusOr<PreparedJob> Run(
      std::function<absl::StatusOr<PreparedJob>()> work,
      const std::function<bool()>& stop_waiting);

  // Preparations running now, those left behind included.
  int running() const { return running_->load(); }

 private:
  const int max_running_;
  const absl::Duration deadline_;
  std::shared_ptr<std::atomic<int>> running_;
};

}  // namespace lathe::service
