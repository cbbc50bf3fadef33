#include "cli/gpu_bench.h"

#include <chrono>
#include <memory>
#include <utility>

#include "base/status_macros.h"
#include "compiler/codegen/cuda/cuda_driver.h"
#include "compiler/codegen/cuda/cuda_program.h"
#include "compiler/codegen/cuda/nvrtc_compiler.h"
#include "runner/cuda/cuda_measurer.h"

namespace lathe::cli {

absl::StatusOr<GpuBench> BenchOnGpu(const Workload& workload,
                                    const Trace* trace, const Target& target,
                                    double min_time_s, int repeats) {
  // Built once, here: a trace that does not replay, a kernel past the
  // device's limits or NVRTC's refusal is the command's error, not a
  // measurement.
  const auto start = std::chrono::steady_clock::now();
  LATHE_ASSIGN_OR_RETURN(cuda::CudaProgram program,
                         cuda::MakeCudaProgram(workload, trace, target));
  LATHE_ASSIGN_OR_RETURN(
      cuda::CompiledCuda compiled,
      cuda::CompileCuda(program.module.source, target.cpu, /*cubin=*/true));
  runner::CudaCandidate built;
  built.workload = workload;
  built.module = program.module;
  built.cubin = std::move(compiled.cubin);
  built.structural_hash = program.structural_hash;
  built.build_ms = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<cuda::CudaDevice> device,
                         cuda::CudaDevice::Open(0));
  LATHE_ASSIGN_OR_RETURN(
      std::unique_ptr<runner::CudaMeasurer> measurer,
      runner::CudaMeasurer::Create(device.get(), target, {}));
  proto::MeasureRequest request;
  request.set_workload(workload.CanonicalForm());
  program.trace.ToProto(request.mutable_trace());
  request.set_target(target.ToString());
  request.set_min_time_s(min_time_s);
  request.set_min_repeats(repeats);
  request.set_check_seed(1);
  GpuBench bench;
  bench.measured = measurer->MeasureBuilt(request, built);
  bench.trace = std::move(program.trace);
  bench.default_schedule = program.default_schedule;
  bench.device = device->info().name;
  return bench;
}

}  // namespace lathe::cli
