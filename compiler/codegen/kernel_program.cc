#include "compiler/codegen/kernel_program.h"

#include <chrono>
#include <memory>
#include <utility>

#include "compiler/codegen/cuda/cuda_program.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/default_schedule.h"
#include "compiler/schedule/replay.h"

namespace lathe {

absl::StatusOr<KernelProgram> MakeKernelProgram(const Workload& workload,
                                                const Trace* trace,
                                                const Target& target) {
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Program> initial = workload.InitialProgram();
  if (!initial.ok()) return initial.status();
  KernelProgram kernel;
  if (trace != nullptr) {
    kernel.trace = *trace;
  } else {
    // The default schedule is sized for the target: its vector registers
    // and its thread count (one thread: no parallel loop at all).
    absl::StatusOr<Trace> trace_or;
    if (target.IsCuda()) {
      trace_or = cuda::DefaultCudaTrace(*initial, target);
    } else {
      DefaultScheduleOptions options;
      options.vector_width = target.VectorLanesF32();
      options.num_threads = target.num_threads;
      trace_or = DefaultSchedule(*initial, options);
    }
    if (!trace_or.ok()) return trace_or.status();
    kernel.trace = *std::move(trace_or);
    kernel.default_schedule = true;
    kernel.trace.workload = workload.CanonicalForm();
  }
  absl::StatusOr<std::unique_ptr<TracedSchedule>> scheduled =
      ReplayTrace(kernel.trace, *initial);
  if (!scheduled.ok()) return scheduled.status();
  kernel.scheduled = (*scheduled)->program();
  kernel.trace = (*scheduled)->trace();
  if (kernel.trace.workload.empty())
    kernel.trace.workload = workload.CanonicalForm();
  kernel.structural_hash = StructuralHashHex(kernel.scheduled);
  absl::StatusOr<Program> lowered = LowerProgram(kernel.scheduled);
  if (!lowered.ok()) return lowered.status();
  kernel.lowered = *std::move(lowered);
  kernel.schedule_ms = std::chrono::duration<double, std::milli>(
                           std::chrono::steady_clock::now() - start)
                           .count();
  return kernel;
}

}  // namespace lathe
