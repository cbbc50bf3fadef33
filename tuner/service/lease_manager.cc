#include "tuner/service/lease_manager.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace lathe::service {

LeaseManager::LeaseManager(absl::Duration lease_time, Clock now,
                           int build_ahead_hints)
    : lease_time_(lease_time),
      now_(std::move(now)),
      build_ahead_hints_(build_ahead_hints) {
  std::random_device device;
  rng_state_ = (static_cast<uint64_t>(device()) << 32) ^ device() ^
               static_cast<uint64_t>(absl::ToUnixNanos(absl::Now()));
}

std::string LeaseManager::NewLeaseId() {
  // splitmix64 over a random seed: 128 bits per id, so ids of an earlier
  // daemon (or a guess) never name a live lease.
  auto next = [this] {
    uint64_t z = (rng_state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  const uint64_t a = next(), b = next();
  return absl::StrFormat("%016x%016x", a, b);
}

int64_t LeaseManager::Enqueue(WorkItem work) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t id = next_item_++;
  Item& item = items_[id];
  item.work = std::move(work);
  if (!item.work.simulated && build_ahead_hints_ > 0) {
    item.program = ProgramAffinity::KeyOf(item.work.request);
    item.promised_to = affinity_.RunnerOf(item.program);
  }
  queue_.push_back(id);
  queued_.notify_all();
  return id;
}

void LeaseManager::Finish(int64_t item,
                          absl::StatusOr<proto::MeasureResult> outcome) {
  auto it = items_.find(item);
  if (it == items_.end() || it->second.outcome) return;
  it->second.outcome = std::move(outcome);
  if (!it->second.lease.empty()) leases_.erase(it->second.lease);
  it->second.lease.clear();
  queue_.erase(std::remove(queue_.begin(), queue_.end(), item), queue_.end());
  it->second.done.notify_all();
}

absl::StatusOr<proto::MeasureResult> LeaseManager::Wait(int64_t item) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = items_.find(item);
  if (it == items_.end())
    return absl::NotFoundError(absl::StrCat("work item ", item, " is unknown"));
  it->second.done.wait(lock, [&] { return it->second.outcome.has_value(); });
  absl::StatusOr<proto::MeasureResult> outcome = *std::move(it->second.outcome);
  items_.erase(it);
  return outcome;
}

std::string LeaseManager::WaiterKey(const std::string& target, bool simulated) {
  return absl::StrCat(simulated ? "s:" : "r:", target);
}

bool LeaseManager::ForRunner(const WorkItem& work, const std::string& target,
                             bool simulated) {
  return work.simulated == simulated && work.request.target() == target;
}

std::optional<Lease> LeaseManager::TakeLocked(const std::string& runner,
                                              const std::string& target,
                                              bool simulated) {
  auto chosen = queue_.end(), unpromised = queue_.end(),
       promised_elsewhere = queue_.end();
  for (auto q = queue_.begin(); q != queue_.end(); ++q) {
    const Item& item = items_[*q];
    if (!ForRunner(item.work, target, simulated)) continue;
    // Simulated items are never promised: the oldest is the one.
    if (item.promised_to == runner || simulated) {
      chosen = q;
      break;
    }
    auto& first = item.promised_to.empty() ? unpromised : promised_elsewhere;
    if (first == queue_.end()) first = q;
  }
  if (chosen == queue_.end())
    chosen = unpromised != queue_.end() ? unpromised : promised_elsewhere;
  if (chosen == queue_.end()) return std::nullopt;
  const int64_t id = *chosen;
  queue_.erase(chosen);
  Item& item = items_[id];
  Lease lease;
  lease.id = NewLeaseId();
  lease.item = id;
  lease.work = item.work;
  item.lease = lease.id;
  item.promised_to.clear();
  leases_[lease.id] = LiveLease{id, runner, now_() + lease_time_};
  ++stats_.granted;
  if (!simulated && build_ahead_hints_ > 0) {
    affinity_.Remember(item.program, runner);
    HintLocked(runner, lease.work.request);
  }
  return lease;
}

void LeaseManager::HintLocked(const std::string& runner,
                              proto::MeasureRequest& request) {
  int hints = 0;
  for (int64_t id : queue_) {
    if (hints >= build_ahead_hints_) break;
    Item& item = items_[id];
    const proto::MeasureRequest& other = item.work.request;
    if (item.work.simulated || !other.has_trace() ||
        other.target() != request.target() ||
        other.workload() != request.workload()) {
      continue;
    }
    if (!item.promised_to.empty() && item.promised_to != runner) continue;
    item.promised_to = runner;
    affinity_.Remember(item.program, runner);
    *request.add_build_ahead() = other.trace();
    ++hints;
  }
}

void LeaseManager::ForgetRunnerLocked(const std::string& runner) {
  for (int64_t id : queue_) {
    Item& item = items_[id];
    if (item.promised_to == runner) item.promised_to.clear();
  }
  affinity_.Forget(runner);
}

std::optional<Lease> LeaseManager::Acquire(const std::string& runner,
                                           const std::string& target,
                                           bool simulated,
                                           absl::Duration wait) {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto give_up =
      std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(wait);
  int& waiters = idle_waiters_[WaiterKey(target, simulated)];
  while (true) {
    ExpireLocked();
    if (std::optional<Lease> lease = TakeLocked(runner, target, simulated))
      return lease;
    ++waiters;
    const bool timed_out =
        queued_.wait_until(lock, give_up) == std::cv_status::timeout;
    --waiters;
    if (timed_out && std::chrono::steady_clock::now() >= give_up)
      return std::nullopt;
  }
}

std::optional<Lease> LeaseManager::Prefetch(const std::string& runner,
                                            const std::string& target,
                                            bool simulated) {
  std::lock_guard<std::mutex> lock(mutex_);
  ExpireLocked();
  int held = 0;
  for (const auto& [id, lease] : leases_)
    held += lease.runner == runner ? 1 : 0;
  if (held >= kMaxLeasesPerRunner) return std::nullopt;
  int matching = 0;
  for (int64_t id : queue_)
    matching += ForRunner(items_[id].work, target, simulated) ? 1 : 0;
  auto waiting = idle_waiters_.find(WaiterKey(target, simulated));
  if (matching <= (waiting == idle_waiters_.end() ? 0 : waiting->second))
    return std::nullopt;
  return TakeLocked(runner, target, simulated);
}

int LeaseManager::IdleRunners(const std::string& target, bool simulated) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = idle_waiters_.find(WaiterKey(target, simulated));
  return it == idle_waiters_.end() ? 0 : it->second;
}

std::vector<std::string> LeaseManager::Heartbeat(
    const std::string& runner, const std::vector<std::string>& lease_ids) {
  std::lock_guard<std::mutex> lock(mutex_);
  ExpireLocked();
  std::vector<std::string> gone;
  for (const std::string& id : lease_ids) {
    auto it = leases_.find(id);
    if (it == leases_.end() || it->second.runner != runner) {
      gone.push_back(id);
      continue;
    }
    it->second.deadline = now_() + lease_time_;
  }
  return gone;
}

ReportOutcome LeaseManager::Report(const std::string& runner,
                                   const std::string& lease_id,
                                   const proto::MeasureResult& result) {
  std::lock_guard<std::mutex> lock(mutex_);
  ExpireLocked();
  auto it = leases_.find(lease_id);
  if (it == leases_.end() || it->second.runner != runner) {
    ++stats_.dropped_results;
    return ReportOutcome::kDropped;
  }
  Finish(it->second.item, result);
  return ReportOutcome::kAccepted;
}

ReportOutcome LeaseManager::Return(const std::string& runner,
                                   const std::string& lease_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = leases_.find(lease_id);
  if (it == leases_.end() || it->second.runner != runner)
    return ReportOutcome::kDropped;
  const int64_t item = it->second.item;
  leases_.erase(it);
  items_[item].lease.clear();
  queue_.push_front(item);
  // It could not measure, or it stops: it will not build what it was promised.
  ForgetRunnerLocked(runner);
  queued_.notify_all();
  return ReportOutcome::kAccepted;
}

void LeaseManager::ReleaseRunner(const std::string& runner) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = leases_.begin(); it != leases_.end();) {
    if (it->second.runner != runner) {
      ++it;
      continue;
    }
    items_[it->second.item].lease.clear();
    queue_.push_front(it->second.item);
    it = leases_.erase(it);
  }
  ForgetRunnerLocked(runner);
  queued_.notify_all();
}

void LeaseManager::ExpireLocked() {
  const absl::Time now = now_();
  std::vector<int64_t> requeue;
  std::vector<std::string> gone;
  for (auto it = leases_.begin(); it != leases_.end();) {
    if (it->second.deadline > now) {
      ++it;
      continue;
    }
    expired_runners_.push_back(it->second.runner);
    gone.push_back(it->second.runner);
    requeue.push_back(it->second.item);
    items_[it->second.item].lease.clear();
    ++stats_.expired;
    it = leases_.erase(it);
  }
  if (requeue.empty()) return;
  // Oldest first, ahead of items never tried: they have waited longest.
  std::sort(requeue.begin(), requeue.end());
  queue_.insert(queue_.begin(), requeue.begin(), requeue.end());
  for (const std::string& runner : gone) ForgetRunnerLocked(runner);
  queued_.notify_all();
}

std::vector<std::string> LeaseManager::ExpireLeases() {
  std::lock_guard<std::mutex> lock(mutex_);
  ExpireLocked();
  // Also those found expired by other calls since the last time.
  std::vector<std::string> runners;
  runners.swap(expired_runners_);
  return runners;
}

void LeaseManager::CancelJob(const std::string& job, const absl::Status& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<int64_t> ids;
  for (const auto& [id, item] : items_) {
    if (item.work.job == job && !item.outcome) ids.push_back(id);
  }
  for (int64_t id : ids) Finish(id, why);
}

void LeaseManager::CancelAll(const absl::Status& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<int64_t> ids;
  for (const auto& [id, item] : items_) {
    if (!item.outcome) ids.push_back(id);
  }
  for (int64_t id : ids) Finish(id, why);
}

LeaseStats LeaseManager::Stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  LeaseStats stats = stats_;
  stats.queued = static_cast<int64_t>(queue_.size());
  stats.leased = static_cast<int64_t>(leases_.size());
  return stats;
}

std::pair<int, int> LeaseManager::JobCounts(const std::string& job) {
  std::lock_guard<std::mutex> lock(mutex_);
  int queued = 0, leased = 0;
  for (int64_t id : queue_) queued += items_[id].work.job == job ? 1 : 0;
  for (const auto& [id, lease] : leases_)
    leased += items_[lease.item].work.job == job ? 1 : 0;
  return {queued, leased};
}

std::map<std::string, int> LeaseManager::LeasesByRunner() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::string, int> counts;
  for (const auto& [id, lease] : leases_) ++counts[lease.runner];
  return counts;
}

}  // namespace lathe::service
