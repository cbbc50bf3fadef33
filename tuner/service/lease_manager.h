// The daemon's work queue and its leases (docs/architecture.md, "Trust and
// failure"; docs/service.md, "Leases").
//
// A job's measure function enqueues each candidate as a work item and waits
// for its result. A runner acquires the oldest queued item whose target
// string equals its own (and whose kind, simulated or real, is its own)
// under a lease; its heartbeats renew the lease. A lease not renewed within
// the lease time expires and its item goes back to the front of the queue
// for another runner. A result is accepted only for a live lease: a late
// result of an expired lease, a result for an unknown lease or a second
// result of a lease is dropped and counted. So each item gets exactly one
// result, whatever runners die or come back.
//
// Building ahead. A runner's worker builds the programs a request names in
// its build_ahead while it measures (runner/build_ahead.h): for a conv2d
// candidate the build is most of a measurement. So the lease of a real
// (not simulated) item names the next queued items of the same workload
// and target, up to `build_ahead_hints`, and promises them to its runner,
// whose next Acquire or Prefetch takes its promised items first, oldest
// first. Another runner takes an item promised elsewhere only when nothing
// unpromised is queued for it, so no item waits on a busy runner while one
// idles. An item queued for a program a runner was leased or promised
// before (ProgramAffinity: a later round of a batch) is promised to that
// runner, whose worker has the kernel. The promises of a runner whose
// lease expires, that returns a lease or is released are dropped.
//
// Thread-safe. The clock is injectable for tests; the daemon calls
// ExpireLeases periodically (every call also expires what is due).
// Tests: tests/tuner/service/lease_manager_test.cc.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/measure.pb.h"
#include "tuner/search/measurement_rounds.h"
#include "tuner/service/program_affinity.h"

namespace lathe::service {

struct WorkItem {
  std::string job;
  bool simulated = false;  // only simulated runners take it
  proto::MeasureRequest request;
};

struct Lease {
  std::string id;  // random: never reused, not even across daemon restarts
  int64_t item = 0;
  WorkItem work;
};

enum class ReportOutcome {
  kAccepted,
  kDropped,  // expired, unknown or already reported lease
};

struct LeaseStats {
  int64_t queued = 0;
  int64_t leased = 0;
  int64_t granted = 0;          // leases handed out (Acquire, Prefetch)
  int64_t expired = 0;          // leases that expired (items re-queued)
  int64_t dropped_results = 0;  // late or unknown results
};

class LeaseManager {
 public:
  using Clock = std::function<absl::Time()>;
  // How many queued items a lease names for building ahead, by default:
  // as many as a request of the tuner's own runner names.
  static constexpr int kDefaultBuildAheadHints = tuner::kBuildAheadHints;
  explicit LeaseManager(
      absl::Duration lease_time, Clock now = [] { return absl::Now(); },
      int build_ahead_hints = kDefaultBuildAheadHints);

  absl::Duration lease_time() const { return lease_time_; }

  // Queues an item; its result comes through Wait.
  int64_t Enqueue(WorkItem work);
  // Blocks until the item has a result (then forgets the item), or the
  // item is cancelled (CancelJob, CancelAll: the status given there).
  absl::StatusOr<proto::MeasureResult> Wait(int64_t item);

  // The oldest queued item for (target, simulated), leased to `runner`;
  // waits up to `wait` for one to be queued; nullopt when none came.
  std::optional<Lease> Acquire(const std::string& runner,
                               const std::string& target, bool simulated,
                               absl::Duration wait);
  // The same for a runner still busy with another lease, asking for its
  // next one ahead of time. Never waits. An item is handed only if more
  // matching items are queued than idle runners wait for in Acquire (a
  // waiting runner would start it sooner) and the runner holds fewer than
  // kMaxLeasesPerRunner leases.
  std::optional<Lease> Prefetch(const std::string& runner,
                                const std::string& target, bool simulated);
  static constexpr int kMaxLeasesPerRunner = 2;
  // Runners blocked in Acquire for (target, simulated) now.
  int IdleRunners(const std::string& target, bool simulated);
  // Renews the runner's leases; returns those it no longer holds.
  std::vector<std::string> Heartbeat(const std::string& runner,
                                     const std::vector<std::string>& lease_ids);
  // The result of a lease. Only the runner holding a live lease is heard.
  ReportOutcome Report(const std::string& runner, const std::string& lease_id,
                       const proto::MeasureResult& result);
  // The runner could not measure: the item goes back to the front of the
  // queue. kDropped when the lease was not live.
  ReportOutcome Return(const std::string& runner, const std::string& lease_id);
  // Leases of a runner that is gone (quarantined): re-queued now.
  void ReleaseRunner(const std::string& runner);

  // Re-queues the items of leases past their deadline; returns the runners
  // whose leases expired since the last call (once per lease, also those
  // that other calls found expired).
  std::vector<std::string> ExpireLeases();

  // Fails the job's queued and leased items (Wait returns `why`).
  void CancelJob(const std::string& job, const absl::Status& why);
  void CancelAll(const absl::Status& why);

  LeaseStats Stats();
  // Queued and leased items of one job.
  std::pair<int, int> JobCounts(const std::string& job);
  // Leases held by each runner.
  std::map<std::string, int> LeasesByRunner();

 private:
  struct Item {
    WorkItem work;
    std::optional<absl::StatusOr<proto::MeasureResult>> outcome;
    std::string lease;        // the live lease, if any
    std::string promised_to;  // the runner told to build it ahead, if any
    // ProgramAffinity::KeyOf(work.request), computed once when queued (it
    // serializes the trace); real items only, with build-ahead on.
    uint64_t program = 0;
    // Its waiter alone is woken by its outcome (a job has up to
    // --parallelism waiters; waking them all at every result costs more
    // than the dispatch itself on a small machine).
    std::condition_variable done;
  };
  struct LiveLease {
    int64_t item;
    std::string runner;
    absl::Time deadline;
  };
  // Re-queues the items of leases past their deadline; their runners go to
  // expired_runners_ for ExpireLeases.
  void ExpireLocked();
  // A runner of (target, simulated) may take `work`.
  static bool ForRunner(const WorkItem& work, const std::string& target,
                        bool simulated);
  // Leases to `runner` the oldest queued item for (target, simulated)
  // promised to it, else the oldest unpromised one, else the oldest.
  std::optional<Lease> TakeLocked(const std::string& runner,
                                  const std::string& target, bool simulated);
  // Names in `request` (just leased to `runner`, its item out of the queue)
  // the next queued items of its workload and target not promised to
  // another runner, and promises them to `runner`.
  void HintLocked(const std::string& runner, proto::MeasureRequest& request);
  // Drops the promises to a runner that will not build them.
  void ForgetRunnerLocked(const std::string& runner);
  static std::string WaiterKey(const std::string& target, bool simulated);
  void Finish(int64_t item, absl::StatusOr<proto::MeasureResult> outcome);
  std::string NewLeaseId();

  const absl::Duration lease_time_;
  const Clock now_;
  const int build_ahead_hints_;
  ProgramAffinity affinity_;
  std::mutex mutex_;
  std::condition_variable queued_;  // an item was queued (Acquire's waiters)
  int64_t next_item_ = 1;
  std::map<int64_t, Item> items_;
  std::deque<int64_t> queue_;  // queued items, oldest first
  std::map<std::string, LiveLease> leases_;
  // Runners blocked in Acquire, by WaiterKey (what Prefetch leaves to them).
  std::map<std::string, int> idle_waiters_;
  std::vector<std::string>
      expired_runners_;  // not yet returned by ExpireLeases
  LeaseStats stats_;
  uint64_t rng_state_;
};

}  // namespace lathe::service
