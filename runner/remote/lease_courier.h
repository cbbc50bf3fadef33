// A remote runner's traffic with the daemon's work queue, on a thread of its
// own so that talking overlaps measuring. While the runner measures one
// lease, the courier reports the previous result and, with it, asks for the
// next lease ahead of time (`prefetch`): when the measurement ends, the next
// one starts at once instead of after a round trip to the tuner. The daemon
// hands a lease ahead only while no idle runner waits for the item and the
// runner holds fewer than two (tuner/service/lease_manager.h, Prefetch), so a
// short queue still goes to idle runners first. A lease fetched ahead is
// renewed by the heartbeats like the one being measured, and given back
// (released, not failed) when the runner stops.
//
// When the runner has nothing in hand, the courier long-polls for work, and
// it registers again when a restarted daemon no longer knows the runner.
// Tests: tests/runner/remote/remote_runner_test.cc (with a real daemon on
// loopback), and the process tests of tests/tuner/service.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/service.pb.h"
#include "runner/remote/heartbeats.h"
#include "runner/remote/runner_connection.h"

namespace lathe::runner {

class LeaseCourier {
 public:
  // `connection` must be registered.
  LeaseCourier(RunnerConnection& connection, bool prefetch);
  ~LeaseCourier();

  // The next lease to measure; blocks until there is one. nullopt when the
  // runner stops; an error that retrying cannot fix (credentials refused,
  // runner quarantined, another refusal of the daemon's).
  absl::StatusOr<std::optional<proto::AcquireWorkResponse>> Next();
  // The result of the lease Next gave last (runner_id and lease_id set).
  void Report(proto::ReportResultRequest report);
  // Sends the reports still queued, gives back a lease fetched ahead and
  // stops the thread; the first error that stopped the courier, if any.
  absl::Status Finish();

 private:
  void Loop();
  bool WantsWorkLocked() const;
  void AcceptLocked(proto::AcquireWorkResponse work);
  // Reports until the tuner answers or the lease is surely gone; the work
  // the answer brings, if any, in `next`.
  absl::Status SendReport(const proto::ReportResultRequest& report,
                          proto::AcquireWorkResponse* next);
  // One AcquireWork call; an error only when retrying cannot fix it.
  absl::Status Acquire(bool prefetching, proto::AcquireWorkResponse* work);
  void Release(const proto::AcquireWorkResponse& work);

  RunnerConnection& connection_;
  const bool prefetch_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<proto::ReportResultRequest> reports_;
  std::optional<proto::AcquireWorkResponse> in_hand_;
  bool waiting_ = false;  // the runner waits in Next
  bool busy_ = false;     // the runner measures (between Next and Report)
  bool prefetch_tried_ = false;  // once per measurement
  bool finishing_ = false;
  bool done_ = false;
  bool unreachable_ = false;
  double retry_delay_s_ = 0.1;
  absl::Status fatal_;
  Heartbeats heartbeats_;
  std::thread thread_;
};

}  // namespace lathe::runner
