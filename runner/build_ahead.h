// Building candidates before they are asked for: a request may name the
// candidates its runner will most likely be asked for next
// (MeasureRequest.build_ahead, set by the tuner when one runner measures a
// batch in order), and the worker builds them on a thread of its own, on a
// CPU the kernels it times do not use, while it checks and times the
// current one.
//
// Why: building (lowering, LLVM O3, machine code) is most of a worker's time
// on workloads whose schedules unroll deep, all of it on the measuring CPU
// while the others idle. A build ahead runs beside timing, as the tuner's
// search already does; the same candidates timed with builds beside them and
// without come out as fast and in the same order (bench/README.md, "Why the
// code is as it is").
//
// How it keeps out of the way:
//  - only CPUs the kernel leaves free: a kernel of T threads runs on the
//    first T CPUs of `cpus` (measure_worker.h), the builder is pinned to the
//    rest;
//  - none left (a kernel on every CPU, `lathe tune`'s default): nothing is
//    built while a kernel runs. The hints wait until the measuring thread
//    has to build a candidate itself, and are built then, beside it, on the
//    other CPUs (one thread pinned to each, at normal priority), until none
//    is left; Take returns when all are done, so the check and the timing
//    that follow have the machine to themselves. A batch's first round is
//    built up to as many at a time as there are CPUs instead of one. None
//    is started past kBesideShareOfTimeout of the request's timeout, so
//    that others' builds cannot time it out;
//  - the builder runs at SCHED_IDLE, so it takes what the CPU has left and
//    the scheduler has no reason to move another busy thread (the tuner's
//    search) onto the measuring CPU;
//  - the measuring thread never waits on a builder that does not run: a
//    candidate still queued is built on the spot; one the builder is on is
//    waited for while the measuring thread builds queued ones itself, for
//    as long as the builder gets at least half a CPU (its thread's CPU
//    clock, over windows of kStarvedAfterS); starved, it is built on the
//    spot too. (A slow build is waited for: some schedules take seconds.)
// A build-only request (MeasureRequest.build_only; BuildAll) builds its
// trace and its hints at once on every CPU, for a tuner that searches
// meanwhile instead of beside the timings that follow.
// A build that crashes the process takes the request in flight with it (the
// runner records that candidate as crashed); the culprit crashes its own
// request later, in a fresh worker that builds it in the foreground.
// Thread-safe. Tests: tests/runner/build_ahead_test.cc.
#pragma once

#include <time.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "proto/measure.pb.h"
#include "runner/candidate_build.h"

namespace lathe::runner {

class BuildAhead {
 public:
  // Builds waiting or done ahead, at most (hints beyond are dropped; done
  // builds never asked for are forgotten oldest first): a tuner's batch (32)
  // built by one build-only request, with room to spare.
  static constexpr int kMaxEntries = 64;
  // The window over which a builder that the measuring thread waits for is
  // judged starved.
  static constexpr double kStarvedAfterS = 0.5;
  // The share of a request's timeout (MeasureRequest.timeout_s) after which
  // no more queued candidates are started beside its own build: those left
  // wait for the next one.
  static constexpr double kBesideShareOfTimeout = 1.0 / 3;
  // The same for a build-only request (BuildAll), which has nothing to time
  // after its builds.
  static constexpr double kBuildOnlyShareOfTimeout = 1.0 / 2;

  // `cpus`: the CPUs this process may run on, in the order the runtime pins
  // a kernel's threads to them. `idle_priority` false: the builder runs at
  // the process's priority (tests on a loaded machine, where SCHED_IDLE
  // could wait for seconds).
  explicit BuildAhead(std::vector<int> cpus, bool idle_priority = true);
  // Waits for the build in progress; drops the rest.
  ~BuildAhead();
  BuildAhead(const BuildAhead&) = delete;
  BuildAhead& operator=(const BuildAhead&) = delete;

  // Queues `request`'s build_ahead traces (of its workload and target) that
  // are not queued, in progress or done already, when its target leaves a
  // CPU free.
  void Add(const proto::MeasureRequest& request);

  // The build of `request` (its workload, trace and target): one done ahead
  // (built_ahead set), or one built now on the calling thread.
  CandidateBuild Take(const proto::MeasureRequest& request);

  // A build-only request: builds `request`'s trace (when it has one) on the
  // calling thread and its build_ahead traces on every CPU (one thread
  // pinned to each other CPU, at normal priority, and the calling thread
  // once its own is done), whatever CPUs its target uses, and keeps them
  // all for Take. None is started past kBuildOnlyShareOfTimeout of the
  // request's timeout: those left are built beside later requests' builds,
  // or on the spot. Returns once every build started has finished, with
  // the trace's own build's status (its failure, or OK), structural hash,
  // and build_ms the wall time of it all.
  proto::MeasureResult BuildAll(const proto::MeasureRequest& request);

  struct Stats {
    int64_t queued = 0;  // hints queued
    int64_t built_by_builder = 0;
    int64_t built_while_waiting = 0;  // queued ones the measuring thread built
    int64_t built_beside = 0;         // by the threads beside the measuring one
    int64_t built_on_request = 0;     // by build-only requests (BuildAll)
    int64_t taken_ahead = 0;          // requests whose build was done ahead
    int64_t starved = 0;  // built on the spot as the builder did not run
    double wait_s = 0;    // the measuring thread's waits for the builder
    int64_t waiting = 0;  // now: queued, not started
    int64_t done = 0;     // now: done, not taken
  };
  Stats stats() const;

 private:
  enum class State { kQueued, kBuilding, kDone };
  struct Entry {
    State state = State::kQueued;
    std::string workload, target;
    proto::Trace trace;
    std::vector<int>
        builder_cpus;  // where the builder may run it; none: built beside
    CandidateBuild build;
    bool abandoned = false;  // built on the spot meanwhile: drop when done
  };

  void BuilderLoop();
  // Builds `own` on the calling thread while one thread per other CPU builds
  // the queued beside-builds, then queued ones on the calling thread too,
  // until none is left or kBesideShareOfTimeout of `own`'s timeout has
  // passed; returns `own`'s build once every build started has finished.
  // `lock` is held on entry and released on return.
  CandidateBuild BuildBesideOthers(const proto::MeasureRequest& own,
                                   std::unique_lock<std::mutex>& lock);
  // Queues `trace`'s build (of `workload` and `target`) unless known or no
  // room is left; with no `builder_cpus`, beside (beside_queue_). Returns
  // whether it was queued.
  bool Enqueue(const std::string& workload, const std::string& target,
               const proto::Trace& trace, const std::vector<int>& builder_cpus);
  // A kQueued entry for (workload, target, trace) under `key`, in no queue
  // yet.
  Entry& NewEntry(const std::string& key, const std::string& workload,
                  const std::string& target, const proto::Trace& trace);
  // Starts one thread on each CPU after the first, as many as there are
  // queued builds, each pinned there and running BuildQueued(stop_at,
  // counter). `mu_` is held; the caller joins them.
  std::vector<std::thread> StartHelpers(
      std::optional<std::chrono::steady_clock::time_point> stop_at,
      int64_t& counter);
  // Builds queued entries, beside_queue_'s first, then the builder's, on
  // the calling thread until none is left or `stop_at` has passed (none:
  // no limit), counting them in `counter`. `lock` is held.
  void BuildQueued(std::optional<std::chrono::steady_clock::time_point> stop_at,
                   int64_t& counter, std::unique_lock<std::mutex>& lock);
  // The queue a kQueued entry waits in: the builder's, or beside_queue_.
  std::deque<std::string>& QueueOf(const Entry& entry);
  // Takes the first key of `queue` (not empty) and builds its entry
  // (BuildEntry).
  void BuildFront(std::deque<std::string>& queue,
                  std::unique_lock<std::mutex>& lock);
  // Builds `key`'s entry (state kBuilding) with `lock` released; returns
  // with it held and the entry done, or erased when abandoned.
  void BuildEntry(const std::string& key, std::unique_lock<std::mutex>& lock);
  void ForgetOldDone();
  // The builder thread's CPU time so far; 0 before it started.
  double BuilderCpuSeconds() const;

  const std::vector<int> cpus_;
  const bool idle_priority_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  absl::flat_hash_map<std::string, Entry> entries_;
  std::deque<std::string> queue_;  // kQueued keys for the builder, in order
  // kQueued keys of targets on every CPU, built only beside the measuring
  // thread's own builds (BuildBesideOthers), in order.
  std::deque<std::string> beside_queue_;
  std::deque<std::string> done_order_;  // kDone keys, oldest first
  bool stop_ = false;
  Stats stats_;
  std::thread builder_;  // started with the first hint
  std::optional<clockid_t>
      builder_clock_;  // its CPU clock, set by it under mu_
};

}  // namespace lathe::runner
