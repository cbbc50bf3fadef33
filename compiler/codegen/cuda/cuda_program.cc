#include "compiler/codegen/cuda/cuda_program.h"

#include <memory>

#include "absl/status/status.h"
#include "base/status_macros.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/default_gpu_schedule.h"
#include "compiler/schedule/replay.h"

namespace lathe::cuda {
namespace {

// `trace` replayed on `initial`, lowered and turned into CUDA C.
absl::StatusOr<CudaProgram> Build(const Program& initial, const Trace& trace,
                                  const Target& target) {
  CudaProgram out;
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<TracedSchedule> scheduled,
                         ReplayTrace(trace, initial));
  out.trace = scheduled->trace();
  out.structural_hash = StructuralHashHex(scheduled->program());
  LATHE_ASSIGN_OR_RETURN(out.lowered, LowerProgram(scheduled->program()));
  LATHE_ASSIGN_OR_RETURN(out.module, GenerateCuda(out.lowered, target));
  return out;
}

// The default program (DefaultCudaTrace), built once.
absl::StatusOr<CudaProgram> BuildDefault(const Program& initial,
                                         const Target& target) {
  DefaultGpuScheduleOptions options = DefaultGpuScheduleOptionsFor(
      target.gpu.max_threads_per_block, target.gpu.max_shared_memory_per_block);
  LATHE_ASSIGN_OR_RETURN(Trace tiled, DefaultGpuSchedule(initial, options));
  absl::StatusOr<CudaProgram> built = Build(initial, tiled, target);
  if (!built.ok() && absl::IsFailedPrecondition(built.status())) {
    options.tiles = false;
    LATHE_ASSIGN_OR_RETURN(Trace untiled, DefaultGpuSchedule(initial, options));
    built = Build(initial, untiled, target);
  }
  if (built.ok()) built->default_schedule = true;
  return built;
}

}  // namespace

absl::StatusOr<Trace> DefaultCudaTrace(const Program& initial,
                                       const Target& target) {
  LATHE_ASSIGN_OR_RETURN(CudaProgram program, BuildDefault(initial, target));
  return program.trace;
}

absl::StatusOr<CudaProgram> MakeCudaProgram(const Workload& workload,
                                            const Trace* trace,
                                            const Target& target) {
  LATHE_ASSIGN_OR_RETURN(Program initial, workload.InitialProgram());
  LATHE_ASSIGN_OR_RETURN(CudaProgram out, trace != nullptr
                                              ? Build(initial, *trace, target)
                                              : BuildDefault(initial, target));
  out.trace.workload = workload.CanonicalForm();
  return out;
}

}  // namespace lathe::cuda
