// CUDA candidates built before they are asked for: the traces a request
// names as coming next (MeasureRequest.build_ahead, set by the tuner when
// one runner measures a batch in order), compiled on threads of their own
// while the GPU checks and times the current candidate.
//
// Why: NVRTC takes 0.3-2 s per candidate against milliseconds of GPU time,
// all on the host, whose CPUs the GPU's timing leaves idle (CUDA events time
// the device). Built one by one on the measuring thread, a GPU runner would
// spend nearly all its time compiling.
//
// How it keeps out of the way: `threads` builders, each at SCHED_IDLE (the
// measuring thread, which launches the kernels being timed, always gets its
// CPU first); the caller gives them one CPU fewer than it may use. A build
// that the measuring thread asks for while it is still queued is built on
// the spot; one in progress is waited for. At most kMaxEntries builds are
// queued or kept: hints beyond are dropped, and done builds never asked for
// are forgotten oldest first. Hints are for the target of the request that
// named them (a request of another target drops those of the last one).
// Thread-safe. Tests: tests/runner/cuda/cuda_build_ahead_test.cc.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runner/cuda/cuda_candidate.h"

namespace lathe::runner {

class CudaBuildAhead {
 public:
  static constexpr int kMaxEntries = 64;

  // `threads` >= 1 builders, for candidates of `target` built with
  // `options`.
  CudaBuildAhead(int threads, const Target& target, CudaBuildOptions options);
  // Stops the builders; a build in progress finishes first.
  ~CudaBuildAhead();
  CudaBuildAhead(const CudaBuildAhead&) = delete;
  CudaBuildAhead& operator=(const CudaBuildAhead&) = delete;

  // Queues `request`'s build_ahead traces (each as `request` with that
  // trace), when the request is of this builder's target.
  void Add(const proto::MeasureRequest& request);

  // The build of `request`: done ahead (waited for while in progress;
  // built_ahead set), else built now on the calling thread.
  CudaCandidate Take(const proto::MeasureRequest& request);

  // A build-only request (MeasureRequest.build_only): its own trace and
  // its hints, built by the builders and the calling thread, all done
  // before it returns; its own build's result.
  CudaCandidate BuildAll(const proto::MeasureRequest& request);

 private:
  enum class State { kQueued, kBuilding, kDone };
  struct Entry {
    proto::MeasureRequest request;
    State state = State::kQueued;
    CudaCandidate built;
  };

  // The key of a request's build: its workload, target and trace.
  static std::string KeyOf(const proto::MeasureRequest& request);
  // Queues one build unless it is known or the table is full (after
  // forgetting the oldest done build). Requires mu_.
  void Enqueue(proto::MeasureRequest request);
  // Enqueue of each of `request`'s hints. Requires mu_.
  void EnqueueHints(const proto::MeasureRequest& request);
  // Builds the oldest queued build, `lock` (of mu_) released meanwhile.
  // Requires a queued build.
  void BuildOldest(std::unique_lock<std::mutex>& lock);
  void BuilderLoop();

  const Target target_;
  const CudaBuildOptions options_;
  std::mutex mu_;
  std::condition_variable changed_;
  bool stopping_ = false;
  absl::flat_hash_map<std::string, std::shared_ptr<Entry>> entries_;
  std::deque<std::string> queue_;  // keys of queued builds, oldest first
  std::deque<std::string> done_;   // keys of done builds, oldest first
  std::vector<std::thread> builders_;
};

}  // namespace lathe::runner
