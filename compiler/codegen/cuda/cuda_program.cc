#include "compiler/codegen/cuda/cuda_program.h"

#include <algorithm>
#include <memory>

#include "absl/status/status.h"
#include "base/status_macros.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/default_gpu_schedule.h"
#include "compiler/schedule/replay.h"

namespace lathe::cuda {

absl::StatusOr<Trace> DefaultCudaTrace(const Program& initial,
                                       const Target& target) {
  DefaultGpuScheduleOptions options;
  options.threads_per_block = std::min<int64_t>(
      options.threads_per_block, target.gpu.max_threads_per_block);
  LATHE_ASSIGN_OR_RETURN(Trace tiled, DefaultGpuSchedule(initial, options));
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<TracedSchedule> scheduled,
                         ReplayTrace(tiled, initial));
  LATHE_ASSIGN_OR_RETURN(Program lowered, LowerProgram(scheduled->program()));
  absl::StatusOr<CudaModule> module = GenerateCuda(lowered, target);
  if (module.ok() || !absl::IsFailedPrecondition(module.status())) {
    if (!module.ok()) return module.status();
    return tiled;
  }
  options.tiles = false;
  return DefaultGpuSchedule(initial, options);
}

absl::StatusOr<CudaProgram> MakeCudaProgram(const Workload& workload,
                                            const Trace* trace,
                                            const Target& target) {
  LATHE_ASSIGN_OR_RETURN(Program initial, workload.InitialProgram());
  CudaProgram out;
  if (trace != nullptr) {
    out.trace = *trace;
  } else {
    LATHE_ASSIGN_OR_RETURN(out.trace, DefaultCudaTrace(initial, target));
    out.default_schedule = true;
  }
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<TracedSchedule> scheduled,
                         ReplayTrace(out.trace, initial));
  out.trace = scheduled->trace();
  out.trace.workload = workload.CanonicalForm();
  out.structural_hash = StructuralHashHex(scheduled->program());
  LATHE_ASSIGN_OR_RETURN(out.lowered, LowerProgram(scheduled->program()));
  LATHE_ASSIGN_OR_RETURN(out.module, GenerateCuda(out.lowered, target));
  return out;
}

}  // namespace lathe::cuda
