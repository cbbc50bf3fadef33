#include "compiler/target/target.h"

#include <sched.h>

#include <algorithm>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace lathe {

std::string Target::FeatureString() const {
  return absl::StrJoin(features, ",");
}

std::string Target::ToString() const {
  if (IsCuda()) {
    return absl::StrCat(
        kind, " -arch=", cpu,
        " -max-threads-per-block=", gpu.max_threads_per_block,
        " -max-shared-memory-per-block=", gpu.max_shared_memory_per_block,
        " -registers-per-block=", gpu.registers_per_block,
        " -warp-size=", gpu.warp_size);
  }
  std::string out = absl::StrCat(kind, " -mcpu=", cpu);
  if (!features.empty()) absl::StrAppend(&out, " -mattr=", FeatureString());
  absl::StrAppend(&out, " -num-threads=", num_threads);
  return out;
}

std::vector<std::string> Target::EnabledFeatureList() const {
  std::set<std::string> enabled(resolved_features.begin(),
                                resolved_features.end());
  for (const std::string& f : features) {
    if (f[0] == '+') enabled.insert(f.substr(1));
  }
  for (const std::string& f : features) {
    if (f[0] == '-') enabled.erase(f.substr(1));
  }
  return std::vector<std::string>(enabled.begin(), enabled.end());
}

bool Target::HasFeature(const std::string& name) const {
  // `features` holds at most one setting per name.
  for (const std::string& f : features) {
    if (f.compare(1, std::string::npos, name) == 0) return f[0] == '+';
  }
  return std::binary_search(resolved_features.begin(), resolved_features.end(),
                            name);
}

int Target::VectorLanesF32() const {
  if (HasFeature("avx512f")) return 16;
  if (HasFeature("avx")) return 8;
  return 4;
}

int AllowedCpuCount() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
    return std::max(1, CPU_COUNT(&allowed));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace lathe
