#include "cli/gpu_bench.h"

#include <memory>
#include <utility>

#include "base/status_macros.h"
#include "compiler/codegen/cuda/cuda_driver.h"
#include "compiler/codegen/cuda/cuda_program.h"
#include "runner/cuda/cuda_measurer.h"

namespace lathe::cli {

absl::StatusOr<GpuBench> BenchOnGpu(const Workload& workload,
                                    const Trace* trace, const Target& target,
                                    double min_time_s, int repeats) {
  // The program first: a trace that does not replay, or a kernel past the
  // device's limits, is the command's error, not a measurement.
  LATHE_ASSIGN_OR_RETURN(cuda::CudaProgram program,
                         cuda::MakeCudaProgram(workload, trace, target));
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
  bench.measured = measurer->Measure(request);
  bench.trace = std::move(program.trace);
  bench.default_schedule = program.default_schedule;
  bench.device = device->info().name;
  return bench;
}

}  // namespace lathe::cli
