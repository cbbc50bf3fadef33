#include "runner/build_ahead.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/clock_duration.h"
#include "compiler/codegen/cpu_target.h"

namespace lathe::runner {
namespace {

// Best effort: where and how the builder runs is not correctness.
void RunHereOnly(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);  // 0: the calling thread
}

void RunWhenIdle() {
  sched_param param{};
  param.sched_priority = 0;
  sched_setscheduler(0, SCHED_IDLE, &param);  // 0: the calling thread
}

// The key of a build: workload, target and trace (serialized; the same
// trace serializes to the same bytes in one binary, and a proto::Trace has
// no maps).
std::string BuildKey(const std::string& workload, const std::string& target,
                     const proto::Trace* trace) {
  return absl::StrCat(workload, "\n", target, "\n",
                      trace != nullptr ? "t" : "-",
                      trace != nullptr ? trace->SerializeAsString() : "");
}

}  // namespace

BuildAhead::BuildAhead(std::vector<int> cpus, bool idle_priority)
    : cpus_(std::move(cpus)), idle_priority_(idle_priority) {}

BuildAhead::~BuildAhead() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  if (builder_.joinable()) builder_.join();
}

void BuildAhead::Add(const proto::MeasureRequest& request) {
  if (request.build_ahead_size() == 0) return;
  absl::StatusOr<Target> target = ParseTarget(request.target());
  if (!target.ok()) return;  // its own request fails with the reason
  const size_t used = static_cast<size_t>(std::max(1, target->num_threads));
  // No CPU free while the kernel runs: built beside the measuring thread's
  // own builds only; on one CPU, not at all.
  const bool beside = used >= cpus_.size();
  if (beside && cpus_.size() < 2) return;
  std::vector<int> free_cpus;
  if (!beside)
    free_cpus.assign(cpus_.begin() + static_cast<std::ptrdiff_t>(used),
                     cpus_.end());
  bool added = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const proto::Trace& trace : request.build_ahead()) {
      added |= Enqueue(request.workload(), request.target(), trace, free_cpus);
    }
    if (beside) return;
    if (added && !builder_.joinable())
      builder_ = std::thread([this] { BuilderLoop(); });
  }
  if (added) changed_.notify_all();
}

bool BuildAhead::Enqueue(const std::string& workload, const std::string& target,
                         const proto::Trace& trace,
                         const std::vector<int>& builder_cpus) {
  if (static_cast<int>(entries_.size()) >= kMaxEntries) ForgetOldDone();
  if (static_cast<int>(entries_.size()) >= kMaxEntries) return false;
  std::string key = BuildKey(workload, target, &trace);
  if (entries_.contains(key)) return false;
  Entry& entry = NewEntry(key, workload, target, trace);
  entry.builder_cpus = builder_cpus;
  QueueOf(entry).push_back(std::move(key));
  ++stats_.queued;
  return true;
}

BuildAhead::Entry& BuildAhead::NewEntry(const std::string& key,
                                        const std::string& workload,
                                        const std::string& target,
                                        const proto::Trace& trace) {
  Entry& entry = entries_[key];
  entry.workload = workload;
  entry.target = target;
  entry.trace = trace;
  return entry;
}

void BuildAhead::ForgetOldDone() {
  while (!done_order_.empty() &&
         static_cast<int>(entries_.size()) >= kMaxEntries) {
    entries_.erase(done_order_.front());
    done_order_.pop_front();
  }
}

std::deque<std::string>& BuildAhead::QueueOf(const Entry& entry) {
  // Only a hint queued beside has no CPU of its own (Add).
  return entry.builder_cpus.empty() ? beside_queue_ : queue_;
}

void BuildAhead::BuildFront(std::deque<std::string>& queue,
                            std::unique_lock<std::mutex>& lock) {
  const std::string key = std::move(queue.front());
  queue.pop_front();
  entries_.at(key).state = State::kBuilding;
  BuildEntry(key, lock);
}

void BuildAhead::BuildEntry(const std::string& key,
                            std::unique_lock<std::mutex>& lock) {
  Entry& entry = entries_.at(key);
  const std::string workload = entry.workload, target = entry.target;
  const proto::Trace trace = entry.trace;
  lock.unlock();
  CandidateBuild build = BuildForMeasurement(workload, &trace, target);
  lock.lock();
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  if (it->second.abandoned) {
    entries_.erase(it);
  } else {
    it->second.state = State::kDone;
    it->second.build = std::move(build);
    done_order_.push_back(key);
  }
  changed_.notify_all();
}

void BuildAhead::BuilderLoop() {
  if (idle_priority_) RunWhenIdle();
  std::vector<int> pinned_to;
  std::unique_lock<std::mutex> lock(mu_);
  clockid_t clock;
  if (pthread_getcpuclockid(pthread_self(), &clock) == 0)
    builder_clock_ = clock;
  while (true) {
    changed_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    const std::vector<int>& cpus = entries_.at(queue_.front()).builder_cpus;
    if (cpus != pinned_to) {
      pinned_to = cpus;
      RunHereOnly(pinned_to);
    }
    BuildFront(queue_, lock);
    ++stats_.built_by_builder;
  }
}

CandidateBuild BuildAhead::Take(const proto::MeasureRequest& request) {
  const std::string key =
      BuildKey(request.workload(), request.target(),
               request.has_trace() ? &request.trace() : nullptr);
  // The builder is judged over windows of waiting (building others
  // meanwhile does not count): starved when it ran for less than half of one.
  std::optional<double> window_cpu_s;
  double window_waited_s = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    auto it = entries_.find(key);
    if (it == entries_.end()) break;
    Entry& entry = it->second;
    if (entry.state == State::kDone) {
      CandidateBuild build = std::move(entry.build);
      done_order_.erase(std::find(done_order_.begin(), done_order_.end(), key));
      entries_.erase(it);
      build.built_ahead = true;
      ++stats_.taken_ahead;
      return build;
    }
    if (entry.state == State::kQueued) {
      std::deque<std::string>& queue = QueueOf(entry);
      queue.erase(std::find(queue.begin(), queue.end(), key));
      entries_.erase(it);
      break;
    }
    // On the builder (unless given up on already): build queued ones
    // meanwhile, then wait a little.
    if (entry.abandoned) break;
    if (!queue_.empty()) {
      BuildFront(queue_, lock);
      ++stats_.built_while_waiting;
      continue;
    }
    if (!window_cpu_s) window_cpu_s = BuilderCpuSeconds();
    if (window_waited_s >= kStarvedAfterS) {
      const double ran_s = BuilderCpuSeconds() - *window_cpu_s;
      if (ran_s < 0.5 * window_waited_s) {
        entry.abandoned = true;
        ++stats_.starved;
        break;
      }
      window_cpu_s = BuilderCpuSeconds();
      window_waited_s = 0;
    }
    const auto start = std::chrono::steady_clock::now();
    changed_.wait_for(lock, std::chrono::milliseconds(50));
    const double waited_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    window_waited_s += waited_s;
    stats_.wait_s += waited_s;
  }
  if (!beside_queue_.empty()) return BuildBesideOthers(request, lock);
  lock.unlock();
  return BuildForMeasurement(request);
}

namespace {

std::optional<std::chrono::steady_clock::time_point> StopAt(
    const proto::MeasureRequest& request, double share) {
  if (request.timeout_s() <= 0) return std::nullopt;
  return std::chrono::steady_clock::now() +
         ClockDuration(share * request.timeout_s());
}

}  // namespace

void BuildAhead::BuildQueued(
    std::optional<std::chrono::steady_clock::time_point> stop_at,
    int64_t& counter, std::unique_lock<std::mutex>& lock) {
  while (!beside_queue_.empty() || !queue_.empty()) {
    if (stop_at && std::chrono::steady_clock::now() >= *stop_at) return;
    BuildFront(!beside_queue_.empty() ? beside_queue_ : queue_, lock);
    ++counter;
  }
}

std::vector<std::thread> BuildAhead::StartHelpers(
    std::optional<std::chrono::steady_clock::time_point> stop_at,
    int64_t& counter) {
  std::vector<std::thread> helpers;
  const size_t queued = beside_queue_.size() + queue_.size();
  const size_t count = std::min(cpus_.empty() ? 0 : cpus_.size() - 1, queued);
  for (size_t i = 0; i < count; ++i) {
    helpers.emplace_back([this, stop_at, &counter, cpu = cpus_[1 + i]] {
      RunHereOnly({cpu});
      std::unique_lock<std::mutex> held(mu_);
      BuildQueued(stop_at, counter, held);
    });
  }
  return helpers;
}

CandidateBuild BuildAhead::BuildBesideOthers(
    const proto::MeasureRequest& own, std::unique_lock<std::mutex>& lock) {
  // Each thread takes the next queued build until none is left, so that a
  // long build on one CPU does not keep the others idle, and none after
  // `stop_at`.
  const auto stop_at = StopAt(own, kBesideShareOfTimeout);
  std::vector<std::thread> helpers = StartHelpers(stop_at, stats_.built_beside);
  lock.unlock();
  CandidateBuild build = BuildForMeasurement(own);
  lock.lock();
  BuildQueued(stop_at, stats_.built_while_waiting, lock);
  lock.unlock();
  for (std::thread& helper : helpers) helper.join();
  return build;
}

proto::MeasureResult BuildAhead::BuildAll(
    const proto::MeasureRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  const auto stop_at = StopAt(request, kBuildOnlyShareOfTimeout);
  std::unique_lock<std::mutex> lock(mu_);
  // The own build first (built below on this thread), then the hints, all
  // kept as builds done ahead: this request's point is the ones after it.
  std::optional<std::string> own_key;
  bool build_own = false;
  if (request.has_trace()) {
    own_key = BuildKey(request.workload(), request.target(), &request.trace());
    auto it = entries_.find(*own_key);
    if (it == entries_.end()) {
      // Kept even past kMaxEntries: the request that follows asks for it.
      NewEntry(*own_key, request.workload(), request.target(), request.trace())
          .state = State::kBuilding;
      build_own = true;
    } else if (it->second.state == State::kQueued) {
      std::deque<std::string>& queue = QueueOf(it->second);
      queue.erase(std::find(queue.begin(), queue.end(), *own_key));
      it->second.state = State::kBuilding;
      build_own = true;
    }
  }
  for (const proto::Trace& trace : request.build_ahead()) {
    Enqueue(request.workload(), request.target(), trace, /*builder_cpus=*/{});
  }
  std::vector<std::thread> helpers =
      StartHelpers(stop_at, stats_.built_on_request);
  if (build_own) {
    BuildEntry(*own_key, lock);
    ++stats_.built_on_request;
  }
  BuildQueued(stop_at, stats_.built_on_request, lock);
  lock.unlock();
  for (std::thread& helper : helpers) helper.join();
  lock.lock();

  proto::MeasureResult result;
  result.set_status(proto::MEASURE_OK);
  if (own_key) {
    // Built by the builder meanwhile: waited for, so that the status is
    // the build's.
    changed_.wait(lock, [&] {
      auto it = entries_.find(*own_key);
      return it == entries_.end() || it->second.state != State::kBuilding;
    });
    auto it = entries_.find(*own_key);
    if (it != entries_.end() && it->second.state == State::kDone) {
      const CandidateBuild& build = it->second.build;
      if (!build.ok()) result = build.failure;
      result.set_structural_hash(build.structural_hash);
    }
  }
  result.set_build_ms(std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
  return result;
}

double BuildAhead::BuilderCpuSeconds() const {
  timespec t{};
  if (!builder_clock_ || clock_gettime(*builder_clock_, &t) != 0) return 0;
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

BuildAhead::Stats BuildAhead::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats stats = stats_;
  stats.waiting = static_cast<int64_t>(queue_.size() + beside_queue_.size());
  stats.done = static_cast<int64_t>(done_order_.size());
  return stats;
}

}  // namespace lathe::runner
