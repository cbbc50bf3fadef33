#include "runner/measurable_target.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/cuda/cuda_driver.h"
#include "compiler/target/target_info.h"
#include "runner/cuda/device_target.h"

namespace lathe::runner {

absl::Status CheckMeasurableHere(const Target& target, int cpus) {
  if (target.IsCuda()) return CheckCudaMeasurableHere(target);
  if (absl::Status st = CheckRunnableHere(target); !st.ok()) return st;
  if (cpus <= 0) cpus = AllowedCpuCount();
  if (target.num_threads > cpus) {
    return absl::FailedPreconditionError(absl::StrCat(
        "target \"", target.ToString(), "\" runs ", target.num_threads,
        " threads, but this process may use ", cpus, " CPU",
        cpus == 1 ? "" : "s",
        ": its timings would not be the target's (give it at most ", cpus,
        cpus == 1 ? " thread" : " threads",
        ", or measure on a machine with as many CPUs)"));
  }
  return absl::OkStatus();
}

std::string MeasuringDeviceDescription(const Target& target) {
  if (!target.IsCuda()) return HostDeviceDescription();
  absl::StatusOr<cuda::DeviceInfo> device = cuda::QueryDevice(0);
  if (!device.ok()) return "unknown GPU";
  return absl::StrCat(device->name, " (", device->arch, ", ",
                      device->multiprocessors, " SMs, driver ",
                      device->driver_version / 1000, ".",
                      device->driver_version % 1000 / 10, ")");
}

LocalRunnerOptions WorkerFor(const Target& target,
                             std::vector<std::string> worker_program) {
  LocalRunnerOptions options;
  options.worker_argv = std::move(worker_program);
  if (target.IsCuda()) {
    options.worker_argv.push_back("--cuda");
    options.memory_limit_bytes = 0;
  }
  return options;
}

}  // namespace lathe::runner
