// `lathe-gpu-check --tune`: a short tuning run of one workload on the GPU
// of this machine, with the tuner of `lathe tune` (the GPU design space,
// the evolutionary search, the XGBoost cost model, a database) measuring
// through runner/cuda/cuda_measurer.h in this process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/codegen/cuda/cuda_driver.h"
#include "compiler/schedule/trace.h"
#include "compiler/target/target.h"

namespace lathe::tools {

struct GpuTuneOptions {
  std::string spec;          // the workload
  int64_t trials = 200;      // the trial budget
  double time_budget_s = 0;  // 0: none
  int batch_size = 64;
  int build_threads = 8;  // candidates compiled at once
  std::string db_path;    // the database (created when absent)
  // Compiles CUDA C to a cubin in a child (runner/cuda/child_compile.h);
  // empty: in this process.
  std::vector<std::string> compile_command;
  double compile_timeout_s = 20;
  // The peer's time, measured before tuning in the same run (0: none):
  // each line of the tuning curve then gives the best's ratio to it.
  std::string peer_name;
  double peer_ms = 0;
};

struct GpuTuneResult {
  // The fastest OK program's trace, of the candidates and the default
  // schedule (recorded in the database first, as `lathe tune` does).
  std::optional<Trace> best;
  double best_s = 0;
  double default_s = 0;  // the default GPU schedule, measured the same way
};

// Tunes, printing the tuning curve (one line per batch: trials, errors,
// best time and GFLOP/s, seconds, the peer's time over the best's) and a
// summary with the mean compile time per candidate. Errors: the workload, the
// database, or a measurement that cannot happen at all (the device).
absl::StatusOr<GpuTuneResult> TuneOnGpu(cuda::CudaDevice* device,
                                        const Target& target,
                                        const GpuTuneOptions& options);

}  // namespace lathe::tools
