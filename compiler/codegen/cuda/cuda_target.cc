#include "compiler/codegen/cuda/cuda_target.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "compiler/codegen/cuda/cuda_driver.h"

namespace lathe::cuda {

const std::vector<std::string>& SupportedArchs() {
  static const auto* const kArchs =
      new std::vector<std::string>{"sm_80", "sm_89", "sm_90"};
  return *kArchs;
}

absl::StatusOr<Target> ArchTarget(const std::string& arch) {
  const std::vector<std::string>& archs = SupportedArchs();
  auto it = std::find(archs.begin(), archs.end(), arch);
  if (it == archs.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cuda: unknown architecture \"", arch,
                     "\" (accepted: ", absl::StrJoin(archs, ", "), ")"));
  }
  Target target;
  target.kind = "cuda";
  target.cpu = arch;
  target.num_threads = 1;
  target.gpu.max_threads_per_block = 1024;
  target.gpu.max_shared_memory_per_block = 48 * 1024;
  target.gpu.registers_per_block = 64 * 1024;
  target.gpu.warp_size = 32;
  // Code of an older architecture runs on a newer one.
  target.resolved_features.assign(archs.begin(), it + 1);
  return target;
}

absl::StatusOr<Target> ParseCudaTarget(const std::string& text) {
  std::vector<std::string> words =
      absl::StrSplit(text, ' ', absl::SkipWhitespace());
  if (words.empty() || words[0] != "cuda") {
    return absl::InvalidArgumentError(
        absl::StrCat("target \"", text, "\": not a cuda target"));
  }
  std::string arch;
  struct Limit {
    const char* option;
    int GpuLimits::*field;
    int value;
  };
  Limit limits[] = {
      {"-max-threads-per-block=", &GpuLimits::max_threads_per_block, 0},
      {"-max-shared-memory-per-block=", &GpuLimits::max_shared_memory_per_block,
       0},
      {"-registers-per-block=", &GpuLimits::registers_per_block, 0},
      {"-warp-size=", &GpuLimits::warp_size, 0},
  };
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (absl::StartsWith(w, "-arch=")) {
      if (!arch.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("target \"", text, "\": -arch is given twice"));
      }
      arch = w.substr(6);
      continue;
    }
    bool known = false;
    for (Limit& limit : limits) {
      if (!absl::StartsWith(w, limit.option)) continue;
      known = true;
      const std::string name(limit.option,
                             std::string(limit.option).size() - 1);
      if (limit.value != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("target \"", text, "\": ", name, " is given twice"));
      }
      if (!absl::SimpleAtoi(w.substr(name.size() + 1), &limit.value) ||
          limit.value < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("target \"", text, "\": ", name,
                         " must be a positive integer, got \"",
                         w.substr(name.size() + 1), "\""));
      }
    }
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat(
          "target \"", text, "\": unknown option \"", w,
          "\" (accepted: -arch=sm_80|sm_89|sm_90, -max-threads-per-block=N, "
          "-max-shared-memory-per-block=BYTES, -registers-per-block=N, "
          "-warp-size=N)"));
    }
  }
  Target target;
  if (arch.empty()) {
    absl::StatusOr<DeviceInfo> queried = QueryDevice(0);
    if (!queried.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("target \"", text,
                       "\": no -arch given and no GPU here to resolve "
                       "it (",
                       queried.status().message(), ")"));
    }
    const DeviceInfo& device = *queried;
    absl::StatusOr<Target> local = ArchTarget(device.arch);
    if (!local.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "target \"", text, "\": this machine's GPU (", device.name, ", ",
          device.arch, ") is not an architecture Lathe generates code for"));
    }
    target = *local;
    // The device's own limits, never above the architecture's defaults
    // (more shared memory needs an opt-in Lathe does not make).
    target.gpu.max_threads_per_block = std::min(
        target.gpu.max_threads_per_block, device.limits.max_threads_per_block);
    target.gpu.max_shared_memory_per_block =
        std::min(target.gpu.max_shared_memory_per_block,
                 device.limits.max_shared_memory_per_block);
    target.gpu.registers_per_block = std::min(
        target.gpu.registers_per_block, device.limits.registers_per_block);
  } else {
    absl::StatusOr<Target> parsed = ArchTarget(arch);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("target \"", text, "\": ", parsed.status().message()));
    }
    target = *parsed;
  }
  for (const Limit& limit : limits) {
    if (limit.value == 0) continue;
    const int allowed = target.gpu.*limit.field;
    const std::string name(limit.option, std::string(limit.option).size() - 1);
    if (limit.value > allowed) {
      return absl::InvalidArgumentError(
          absl::StrCat("target \"", text, "\": ", name, "=", limit.value,
                       " is above ", target.cpu, "'s ", allowed));
    }
    target.gpu.*limit.field = limit.value;
  }
  return target;
}

}  // namespace lathe::cuda
