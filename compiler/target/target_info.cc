#include "compiler/target/target_info.h"

#include <fstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace lathe {
namespace {

// The value of the first "key : value" line of a /proc file, or "".
std::string ProcField(const std::string& file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> parts =
        absl::StrSplit(line, absl::MaxSplits(':', 1));
    if (parts.size() == 2 && absl::StripAsciiWhitespace(parts[0]) == key) {
      return std::string(absl::StripAsciiWhitespace(parts[1]));
    }
  }
  return "";
}

}  // namespace

proto::TargetInfo TargetInfoOf(const Target& target,
                               const std::string& device) {
  proto::TargetInfo info;
  info.set_canonical(target.ToString());
  info.set_kind(target.kind);
  info.set_cpu(target.cpu);
  for (const std::string& feature : target.EnabledFeatureList())
    info.add_features(feature);
  info.set_num_threads(target.num_threads);
  info.set_device(device);
  return info;
}

std::string HostDeviceDescription() {
  std::string model = ProcField("/proc/cpuinfo", "model name");
  if (model.empty()) model = "unknown CPU";
  std::string description =
      absl::StrCat(model, " (", std::thread::hardware_concurrency(), " CPUs");
  // "MemTotal: 24576000 kB"
  const std::string memory_field = ProcField("/proc/meminfo", "MemTotal");
  absl::string_view memory = memory_field;
  int64_t kib = 0;
  if (absl::ConsumeSuffix(&memory, " kB") && absl::SimpleAtoi(memory, &kib)) {
    absl::StrAppend(&description, ", ", (kib + (1 << 19)) >> 20, " GiB");
  }
  return description + ")";
}

}  // namespace lathe
