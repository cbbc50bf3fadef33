// The progress display of `lathe tune`: one line per progress report of
// the tuner, redrawn in place on a terminal, or plain lines (one per
// batch-sized step) otherwise, all on stderr. Tuning a model, the line
// shows the model's estimated latency (EstimatedModelLatency) instead of
// each task's speed.
// Tests: tests/cli/tune_commands_test.sh.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/time_text.h"
#include "tuner/search/tuner.h"

namespace lathe::cli {

// A duration in seconds as "42s", "3m07s" or "2h05m" (">1000000h" beyond).
std::string FormatDuration(double s);

// The names of workloads (canonical forms) in one progress line: each cut
// after as few of its parameters as tell it from the others
// ("matmul:K=512" alone; "matmul:K=512,M=256" beside "matmul:K=512,M=1024").
std::vector<std::string> ShortNames(const std::vector<std::string>& workloads);

// One task of a model in its latency estimate.
struct TaskLatency {
  double count = 1;                 // calls per run of the model
  std::optional<double> best_s;     // fastest median so far
  std::optional<double> default_s;  // the default schedule's median
};

// The model's estimated latency: the sum over its tasks of count x the
// task's best median, or its default schedule's median while it has no
// best; nullopt when a task has neither. With `use_best` false: the
// estimate with the default schedules only (nullopt when one is unknown).
std::optional<double> EstimatedModelLatency(
    const std::vector<TaskLatency>& tasks, bool use_best = true);

// Live progress on a terminal (one line redrawn), plain lines otherwise.
class ProgressPrinter {
 public:
  ProgressPrinter() : tty_(isatty(STDERR_FILENO) == 1) {}

  // Tuning a model: `tasks` holds the tasks being tuned, in the order of
  // the tuner's (their best_s is taken from each report), then the tasks
  // not tuned in this run (their best_s as given).
  void ShowModelLatency(std::vector<TaskLatency> tasks) {
    model_ = std::move(tasks);
  }

  void Print(const tuner::TuneProgress& p) {
    // No trial limit (a time budget alone): the count without a total.
    const std::string total =
        p.trials_total == std::numeric_limits<int64_t>::max()
            ? ""
            : absl::StrFormat("/%lld", static_cast<long long>(p.trials_total));
    std::string line = absl::StrFormat(
        "[%lld%s trials, %s, ETA %s] ", static_cast<long long>(p.trials_done),
        total, FormatDuration(p.elapsed_s), FormatDuration(p.eta_s));
    if (model_) {
      line += ModelText(p);
    } else {
      line += TasksText(p);
    }
    if (p.last_accuracy)
      absl::StrAppendFormat(&line, " | model %.2f", *p.last_accuracy);
    if (tty_) {
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
      std::fflush(stderr);
      dirty_ = true;
    } else if (p.trials_done >= next_plain_) {
      // Not a terminal: a line per batch-sized step, not per trial.
      std::fprintf(stderr, "%s\n", line.c_str());
      next_plain_ = p.trials_done + 32;
    }
  }
  void Finish() {
    if (dirty_) std::fprintf(stderr, "\n");
    dirty_ = false;
  }

 private:
  // "latency ~1.2345 ms (default 2.5000 ms)", or "latency -" while a task
  // has no median at all.
  std::string ModelText(const tuner::TuneProgress& p) const {
    std::vector<TaskLatency> tasks = *model_;
    for (size_t i = 0; i < p.tasks.size() && i < tasks.size(); ++i) {
      if (p.tasks[i].best_s) tasks[i].best_s = p.tasks[i].best_s;
    }
    std::optional<double> estimate = EstimatedModelLatency(tasks);
    std::optional<double> start = EstimatedModelLatency(tasks, false);
    if (!estimate) return "latency -";
    std::string text = absl::StrCat("latency ~", TimeText(*estimate));
    if (start) absl::StrAppend(&text, " (default ", TimeText(*start), ")");
    return text;
  }

  std::string TasksText(const tuner::TuneProgress& p) {
    if (names_.size() != p.tasks.size()) {
      std::vector<std::string> workloads;
      for (const tuner::TaskProgress& t : p.tasks)
        workloads.push_back(t.workload);
      names_ = ShortNames(workloads);
    }
    std::vector<std::string> tasks;
    for (size_t i = 0; i < p.tasks.size(); ++i) {
      const tuner::TaskProgress& t = p.tasks[i];
      const std::string& name = names_[i];
      tasks.push_back(
          t.best_s ? absl::StrFormat("%s %.1f GFLOP/s", name, t.best_gflops)
                   : absl::StrCat(name, " -"));
    }
    return absl::StrJoin(tasks, " | ");
  }

  bool tty_;
  std::vector<std::string> names_;  // of p.tasks, as shown
  std::optional<std::vector<TaskLatency>> model_;
  bool dirty_ = false;
  int64_t next_plain_ = 0;
};

}  // namespace lathe::cli
