#include "cli/tune_progress.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace lathe::cli {

std::string FormatDuration(double s) {
  // An ETA of 10^9 trials at a second each overflowed the int below.
  if (!(s < 1e6 * 3600)) return ">1000000h";
  if (s < 60) return absl::StrFormat("%.0fs", s);
  if (s < 3600)
    return absl::StrFormat("%dm%02ds", static_cast<int>(s) / 60,
                           static_cast<int>(s) % 60);
  return absl::StrFormat("%dh%02dm", static_cast<int>(s) / 3600,
                         static_cast<int>(s) / 60 % 60);
}

std::vector<std::string> ShortNames(const std::vector<std::string>& workloads) {
  std::vector<std::vector<std::string>> parts;
  for (const std::string& w : workloads)
    parts.push_back(absl::StrSplit(w, ','));
  std::vector<std::string> names;
  for (size_t i = 0; i < workloads.size(); ++i) {
    size_t keep = 1;
    for (size_t j = 0; j < workloads.size(); ++j) {
      if (j == i) continue;
      // The parameters i shares with j from the start, and one more.
      size_t shared = 0;
      while (shared < parts[i].size() && shared < parts[j].size() &&
             parts[i][shared] == parts[j][shared]) {
        ++shared;
      }
      keep = std::max(keep, std::min(shared + 1, parts[i].size()));
    }
    names.push_back(
        absl::StrJoin(parts[i].begin(), parts[i].begin() + keep, ","));
  }
  return names;
}

std::optional<double> EstimatedModelLatency(
    const std::vector<TaskLatency>& tasks, bool use_best) {
  double total = 0;
  for (const TaskLatency& t : tasks) {
    const std::optional<double>& latency =
        use_best && t.best_s ? t.best_s : t.default_s;
    if (!latency) return std::nullopt;
    total += t.count * *latency;
  }
  return total;
}

}  // namespace lathe::cli
