#include "runner/measurable_target.h"

#include "absl/strings/str_cat.h"
#include "compiler/codegen/cpu_target.h"

namespace lathe::runner {

absl::Status CheckMeasurableHere(const Target& target, int cpus) {
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

}  // namespace lathe::runner
