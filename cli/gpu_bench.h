// `lathe bench SPEC --target cuda...`: one kernel on this machine's first
// GPU, scheduled by a trace (or the default GPU schedule), built with NVRTC,
// checked against the reference and timed with CUDA events, in this process
// (runner/cuda/cuda_measurer.h measures it as a tuning run's worker would).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "compiler/schedule/trace.h"
#include "compiler/target/target.h"
#include "compiler/workload/workload.h"
#include "proto/measure.pb.h"

namespace lathe::cli {

struct GpuBench {
  // MEASURE_OK with the samples (seconds per call), or what went wrong with
  // the kernel (a build error, a wrong result, a fault).
  proto::MeasureResult measured;
  Trace trace;  // as scheduled
  bool default_schedule = false;
  std::string device;  // the GPU's name
};

// `trace` null: the default GPU schedule. At least `repeats` samples,
// totalling at least `min_time_s`. Errors: the driver or the device (none
// here), a trace that does not replay, the code generator's limits,
// NVRTC's refusal (the kernel is built once, before the device opens).
absl::StatusOr<GpuBench> BenchOnGpu(const Workload& workload,
                                    const Trace* trace, const Target& target,
                                    double min_time_s, int repeats);

}  // namespace lathe::cli
