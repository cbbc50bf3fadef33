#include "runner/cuda/cuda_build_ahead.h"

#include <sched.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace lathe::runner {

CudaBuildAhead::CudaBuildAhead(int threads, const Target& target,
                               CudaBuildOptions options)
    : target_(target), options_(std::move(options)) {
  for (int i = 0; i < std::max(1, threads); ++i)
    builders_.emplace_back([this] { BuilderLoop(); });
}

CudaBuildAhead::~CudaBuildAhead() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread& builder : builders_) builder.join();
}

std::string CudaBuildAhead::KeyOf(const proto::MeasureRequest& request) {
  std::string trace;
  if (request.has_trace()) request.trace().SerializeToString(&trace);
  return absl::StrCat(request.workload(), "\n", request.target(), "\n", trace);
}

void CudaBuildAhead::Enqueue(proto::MeasureRequest request) {
  std::string key = KeyOf(request);
  if (entries_.contains(key)) return;
  if (entries_.size() >= static_cast<size_t>(kMaxEntries)) {
    if (done_.empty()) return;  // full of builds still to come: dropped
    entries_.erase(done_.front());
    done_.pop_front();
  }
  auto entry = std::make_shared<Entry>();
  entry->request = std::move(request);
  entries_.emplace(key, std::move(entry));
  queue_.push_back(std::move(key));
  changed_.notify_all();
}

void CudaBuildAhead::EnqueueHints(const proto::MeasureRequest& request) {
  if (request.target() != target_.ToString()) return;
  for (const proto::Trace& trace : request.build_ahead()) {
    proto::MeasureRequest hint = request;
    hint.clear_build_ahead();
    hint.clear_build_only();
    *hint.mutable_trace() = trace;
    Enqueue(std::move(hint));
  }
}

void CudaBuildAhead::Add(const proto::MeasureRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  EnqueueHints(request);
}

void CudaBuildAhead::BuildOldest(std::unique_lock<std::mutex>& lock) {
  const std::string key = queue_.front();
  queue_.pop_front();
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  std::shared_ptr<Entry> entry = it->second;
  entry->state = State::kBuilding;
  lock.unlock();
  CudaCandidate built = BuildCudaCandidate(entry->request, target_, options_);
  lock.lock();
  entry->built = std::move(built);
  entry->state = State::kDone;
  done_.push_back(key);
  changed_.notify_all();
}

CudaCandidate CudaBuildAhead::Take(const proto::MeasureRequest& request) {
  const std::string key = KeyOf(request);
  std::unique_lock<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second->state == State::kQueued) {
    if (it != entries_.end()) {
      queue_.erase(std::find(queue_.begin(), queue_.end(), key));
      entries_.erase(it);
    }
    lock.unlock();
    return BuildCudaCandidate(request, target_, options_);
  }
  std::shared_ptr<Entry> entry = it->second;
  changed_.wait(lock, [&] { return entry->state == State::kDone; });
  // Forgotten meanwhile (the table was full), perhaps queued again: only
  // this entry is removed.
  if (auto now = entries_.find(key);
      now != entries_.end() && now->second == entry) {
    entries_.erase(now);
    done_.erase(std::find(done_.begin(), done_.end(), key));
  }
  CudaCandidate built = std::move(entry->built);
  built.built_ahead = true;
  return built;
}

CudaCandidate CudaBuildAhead::BuildAll(const proto::MeasureRequest& request) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    EnqueueHints(request);
  }
  CudaCandidate own = Take(request);
  // The calling thread helps with what is still queued, then waits for the
  // rest: the tuner searches meanwhile, and nothing is timed.
  std::unique_lock<std::mutex> lock(mu_);
  while (!queue_.empty()) BuildOldest(lock);
  changed_.wait(lock, [&] {
    for (const auto& [key, entry] : entries_) {
      if (entry->state == State::kBuilding) return false;
    }
    return true;
  });
  return own;
}

void CudaBuildAhead::BuilderLoop() {
  // Below the measuring thread, always (runner/build_ahead.h says why).
  sched_param param{};
  sched_setscheduler(0, SCHED_IDLE, &param);  // 0: the calling thread
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    BuildOldest(lock);
  }
}

}  // namespace lathe::runner
