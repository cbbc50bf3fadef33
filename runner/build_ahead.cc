#include "runner/build_ahead.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/target.h"

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
  return absl::StrCat(workload, "\n", target, "\n", trace != nullptr ? "t" : "-",
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
  if (!beside) free_cpus.assign(cpus_.begin() + static_cast<std::ptrdiff_t>(used), cpus_.end());
  bool added = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const proto::Trace& trace : request.build_ahead()) {
      if (static_cast<int>(entries_.size()) >= kMaxEntries) ForgetOldDone();
      if (static_cast<int>(entries_.size()) >= kMaxEntries) break;
      std::string key = BuildKey(request.workload(), request.target(), &trace);
      if (entries_.contains(key)) continue;
      Entry& entry = entries_[key];
      entry.workload = request.workload();
      entry.target = request.target();
      entry.trace = trace;
      entry.builder_cpus = free_cpus;
      QueueOf(entry).push_back(std::move(key));
      ++stats_.queued;
      added = true;
    }
    if (beside) return;
    if (added && !builder_.joinable()) builder_ = std::thread([this] { BuilderLoop(); });
  }
  if (added) changed_.notify_all();
}

void BuildAhead::ForgetOldDone() {
  while (!done_order_.empty() && static_cast<int>(entries_.size()) >= kMaxEntries) {
    entries_.erase(done_order_.front());
    done_order_.pop_front();
  }
}

std::deque<std::string>& BuildAhead::QueueOf(const Entry& entry) {
  // Only a hint queued beside has no CPU of its own (Add).
  return entry.builder_cpus.empty() ? beside_queue_ : queue_;
}

void BuildAhead::BuildFront(std::deque<std::string>& queue, std::unique_lock<std::mutex>& lock) {
  const std::string key = std::move(queue.front());
  queue.pop_front();
  entries_.at(key).state = State::kBuilding;
  BuildEntry(key, lock);
}

void BuildAhead::BuildEntry(const std::string& key, std::unique_lock<std::mutex>& lock) {
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
  if (pthread_getcpuclockid(pthread_self(), &clock) == 0) builder_clock_ = clock;
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
  const std::string key = BuildKey(request.workload(), request.target(),
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
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    window_waited_s += waited_s;
    stats_.wait_s += waited_s;
  }
  if (!beside_queue_.empty()) return BuildBesideOthers(request, lock);
  lock.unlock();
  return BuildForMeasurement(request);
}

CandidateBuild BuildAhead::BuildBesideOthers(const proto::MeasureRequest& own,
                                             std::unique_lock<std::mutex>& lock) {
  // Each thread takes the next queued build until none is left, so that a
  // long build on one CPU does not keep the others idle, and none after
  // `stop_at`.
  std::optional<std::chrono::steady_clock::time_point> stop_at;
  if (own.timeout_s() > 0) {
    stop_at = std::chrono::steady_clock::now() +
              std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  std::chrono::duration<double>(kBesideShareOfTimeout * own.timeout_s()));
  }
  auto build_queued = [this, stop_at](std::unique_lock<std::mutex>& held, int64_t& counter) {
    while (!beside_queue_.empty()) {
      if (stop_at && std::chrono::steady_clock::now() >= *stop_at) return;
      BuildFront(beside_queue_, held);
      ++counter;
    }
  };
  std::vector<std::thread> helpers;
  const size_t count = std::min(cpus_.size() - 1, beside_queue_.size());
  for (size_t i = 0; i < count; ++i) {
    helpers.emplace_back([this, build_queued, cpu = cpus_[1 + i]] {
      RunHereOnly({cpu});
      std::unique_lock<std::mutex> held(mu_);
      build_queued(held, stats_.built_beside);
    });
  }
  lock.unlock();
  CandidateBuild build = BuildForMeasurement(own);
  lock.lock();
  build_queued(lock, stats_.built_while_waiting);
  lock.unlock();
  for (std::thread& helper : helpers) helper.join();
  return build;
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
