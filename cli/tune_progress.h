// The progress display of `lathe tune`: one line per progress report of
// the tuner, redrawn in place on a terminal, or plain lines (one per
// batch-sized step) otherwise, all on stderr.
// Tests: tests/cli/tune_commands_test.sh.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tuner/search/tuner.h"

namespace lathe::cli {

// A duration in seconds as "42s", "3m07s" or "2h05m" (">1000000h" beyond).
std::string FormatDuration(double s);

// The names of workloads (canonical forms) in one progress line: each cut
// after as few of its parameters as tell it from the others
// ("matmul:K=512" alone; "matmul:K=512,M=256" beside "matmul:K=512,M=1024").
std::vector<std::string> ShortNames(const std::vector<std::string>& workloads);

// Live progress on a terminal (one line redrawn), plain lines otherwise.
class ProgressPrinter {
 public:
  ProgressPrinter() : tty_(isatty(STDERR_FILENO) == 1) {}

  void Print(const tuner::TuneProgress& p) {
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
    std::string line = absl::StrFormat(
        "[%lld/%lld trials, %s, ETA %s] %s",
        static_cast<long long>(p.trials_done),
        static_cast<long long>(p.trials_total), FormatDuration(p.elapsed_s),
        FormatDuration(p.eta_s), absl::StrJoin(tasks, " | "));
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
  bool tty_;
  std::vector<std::string> names_;  // of p.tasks, as shown
  bool dirty_ = false;
  int64_t next_plain_ = 0;
};

}  // namespace lathe::cli
