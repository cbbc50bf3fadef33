#include "tuner/search/task_scheduler.h"

#include <algorithm>
#include <limits>

namespace lathe::tuner {
namespace {
// Weight of the recent slope against the optimistic guess (Ansor's alpha).
constexpr double kSlopeWeight = 0.2;
// How many batches back the slope looks.
constexpr int kWindow = 3;
}  // namespace

TaskScheduler::TaskScheduler(std::vector<double> weights) {
  for (double w : weights) {
    TaskState state;
    state.weight = w > 0 ? w : 1;
    tasks_.push_back(state);
  }
}

std::optional<int> TaskScheduler::Next() const {
  const int n = static_cast<int>(tasks_.size());
  // Round robin until every task has had a batch.
  for (int i = 0; i < n; ++i) {
    if (!tasks_[i].done && tasks_[i].batches == 0) return i;
  }
  // A task measured without any valid result: its latency is unknown, not
  // zero, so it goes first (the least tried of them).
  std::optional<int> failing;
  for (int i = 0; i < n; ++i) {
    const TaskState& t = tasks_[i];
    if (t.done || t.history.empty() || t.history.back().second) continue;
    if (!failing || t.trials < tasks_[*failing].trials) failing = i;
  }
  if (failing) return failing;
  std::optional<int> best;
  double best_gain = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < n; ++i) {
    const TaskState& t = tasks_[i];
    if (t.done || t.history.empty()) continue;
    const double latest = *t.history.back().second;
    // Recent slope: latency saved per trial over the last kWindow batches.
    double slope = 0;
    const int back =
        std::min<int>(kWindow, static_cast<int>(t.history.size()) - 1);
    if (back > 0) {
      const auto& [trials_before, before] =
          t.history[t.history.size() - 1 - back];
      const int64_t span = t.history.back().first - trials_before;
      if (before && span > 0)
        slope = (*before - latest) / static_cast<double>(span);
    }
    // Optimistic: as if the next trials could save as much per trial as the
    // average trial so far.
    const double optimistic =
        latest / static_cast<double>(std::max<int64_t>(1, t.trials));
    const double gain =
        t.weight * (kSlopeWeight * slope + (1 - kSlopeWeight) * optimistic);
    if (gain > best_gain) {
      best_gain = gain;
      best = i;
    }
  }
  if (best) return best;
  // Only tasks whose first batch is in flight: the least tried.
  for (int i = 0; i < n; ++i) {
    if (!tasks_[i].done && (!best || tasks_[i].trials < tasks_[*best].trials))
      best = i;
  }
  return best;
}

void TaskScheduler::Dispatch(int task, int64_t trials) {
  tasks_[task].trials += trials;
  ++tasks_[task].batches;
}

void TaskScheduler::Report(int task, std::optional<double> best_latency_s) {
  tasks_[task].history.push_back({tasks_[task].trials, best_latency_s});
}

void TaskScheduler::MarkDone(int task) { tasks_[task].done = true; }

double TaskScheduler::TotalLatency() const {
  double total = 0;
  for (const TaskState& t : tasks_) {
    if (!t.history.empty() && t.history.back().second) {
      total += t.weight * *t.history.back().second;
    }
  }
  return total;
}

}  // namespace lathe::tuner
