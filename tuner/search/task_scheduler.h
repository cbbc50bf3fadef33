// The task scheduler: which task (layer) gets the next batch of trials when
// several are tuned at once.
//
// Trials go where the expected reduction of the total latency, the sum over
// tasks of weight x best latency, is largest (Ansor's gradient scheduling):
// every task first gets one batch; then each task's expected gain per trial
// mixes how fast its best latency fell over its recent batches with an
// optimistic guess (its best latency over its trials so far), times its
// weight. A task whose batches all failed is tried again first; a task whose
// first batch is still being measured comes last (nothing is known of it).
// Batches are counted when dispatched, results when reported, so the
// scheduler works with the next batch chosen before the current one's
// results. Deterministic: ties go to the lower task index.
// Tests: tests/tuner/search/task_scheduler_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace lathe::tuner {

class TaskScheduler {
 public:
  // weights[i]: how often task i runs per run of the whole model.
  explicit TaskScheduler(std::vector<double> weights);

  // The task of the next batch; nullopt when every task is done.
  std::optional<int> Next() const;
  // A batch of `trials` trials of `task` goes to measurement.
  void Dispatch(int task, int64_t trials);
  // After a batch of `task` was measured: its best latency so far (nullopt
  // while nothing valid was measured).
  void Report(int task, std::optional<double> best_latency_s);
  // The task's space is exhausted (nothing left to measure).
  void MarkDone(int task);

  int64_t trials(int task) const { return tasks_[task].trials; }
  // The objective: sum of weight x best latency over tasks with a latency.
  double TotalLatency() const;

 private:
  struct TaskState {
    double weight = 1;
    int64_t trials = 0;
    int batches = 0;
    bool done = false;
    // After each batch: the trials so far and the best latency (nullopt
    // before any valid one).
    std::vector<std::pair<int64_t, std::optional<double>>> history;
  };
  std::vector<TaskState> tasks_;
};

}  // namespace lathe::tuner
