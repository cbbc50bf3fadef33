#include "runner/cuda/device_target.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace lathe::runner {
namespace {

// "target ... is not measured on GPU 0 (NAME, sm_90): REASON".
absl::Status NotMeasured(const Target& target, const cuda::DeviceInfo& device,
                         const std::string& reason) {
  return absl::FailedPreconditionError(
      absl::StrCat("target \"", target.ToString(), "\" cannot be measured on ",
                   device.name.empty() ? "this GPU" : device.name, " (",
                   device.arch, "): ", reason));
}

}  // namespace

absl::Status CheckDeviceMeasures(const Target& target,
                                 const cuda::DeviceInfo& device) {
  if (!target.IsCuda()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "target \"", target.ToString(), "\" is not a cuda target"));
  }
  if (target.cpu != device.arch) {
    return NotMeasured(target, device,
                       absl::StrCat("its code is for ", target.cpu,
                                    " (measure it on a device of that "
                                    "architecture, or tune for \"cuda\")"));
  }
  struct Limit {
    const char* name;
    int target, device;
  };
  const Limit limits[] = {
      {"threads per block", target.gpu.max_threads_per_block,
       device.limits.max_threads_per_block},
      {"shared memory per block", target.gpu.max_shared_memory_per_block,
       device.limits.max_shared_memory_per_block},
      {"registers per block", target.gpu.registers_per_block,
       device.limits.registers_per_block},
  };
  for (const Limit& limit : limits) {
    if (limit.target > limit.device) {
      return NotMeasured(
          target, device,
          absl::StrCat("it allows ", limit.target, " ", limit.name,
                       ", the device ", limit.device));
    }
  }
  if (target.gpu.warp_size != device.limits.warp_size) {
    return NotMeasured(
        target, device,
        absl::StrCat("its warps have ", target.gpu.warp_size,
                     " threads, the device's ", device.limits.warp_size));
  }
  return absl::OkStatus();
}

absl::Status CheckCudaMeasurableHere(const Target& target) {
  absl::StatusOr<cuda::DeviceInfo> device = cuda::QueryDevice(0);
  if (!device.ok()) {
    return absl::Status(device.status().code(),
                        absl::StrCat("target \"", target.ToString(),
                                     "\" cannot be measured here: ",
                                     device.status().message()));
  }
  return CheckDeviceMeasures(target, *device);
}

}  // namespace lathe::runner
