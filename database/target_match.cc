#include "database/target_match.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace lathe::db {

std::optional<std::string> CompatibleDifference(
    const proto::TargetInfo& wanted, const proto::TargetInfo& candidate) {
  if (wanted.kind() != candidate.kind()) return std::nullopt;
  std::vector<std::string> has(wanted.features().begin(),
                               wanted.features().end());
  std::sort(has.begin(), has.end());
  for (const std::string& feature : candidate.features()) {
    if (!std::binary_search(has.begin(), has.end(), feature))
      return std::nullopt;
  }
  std::vector<std::string> differences;
  if (candidate.num_threads() != wanted.num_threads()) {
    differences.push_back(
        absl::StrCat("measured with ", candidate.num_threads(),
                     " threads, asked for ", wanted.num_threads()));
  }
  if (candidate.cpu() != wanted.cpu()) {
    differences.push_back(
        absl::StrCat("cpu ", candidate.cpu(), ", asked for ", wanted.cpu()));
  }
  const int extra = static_cast<int>(has.size()) - candidate.features_size();
  if (extra > 0) {
    differences.push_back(
        absl::StrCat("asked-for target has ", extra, " more features"));
  }
  if (differences.empty() && candidate.canonical() != wanted.canonical()) {
    differences.push_back(absl::StrCat("measured on ", candidate.canonical()));
  }
  return absl::StrJoin(differences, "; ");
}

std::tuple<int, int, int> Closeness(const proto::TargetInfo& wanted,
                                    const proto::TargetInfo& candidate) {
  const bool same_threads = candidate.num_threads() == wanted.num_threads();
  const bool same_cpu = candidate.cpu() == wanted.cpu();
  const int group = same_threads && same_cpu ? 0
                    : same_threads           ? 1
                    : same_cpu               ? 2
                                             : 3;
  return {group, std::abs(candidate.num_threads() - wanted.num_threads()),
          wanted.features_size() - candidate.features_size()};
}

}  // namespace lathe::db
