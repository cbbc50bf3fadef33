// The CUDA program of one workload: scheduled by a trace (the default GPU
// schedule when none is given), lowered and turned into CUDA C, the way a
// GPU runner and the GPU check build every candidate.
// Tests: tests/compiler/codegen/cuda/cuda_codegen_test.cc.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "compiler/codegen/cuda/cuda_codegen.h"
#include "compiler/ir/program.h"
#include "compiler/schedule/trace.h"
#include "compiler/target/target.h"
#include "compiler/workload/workload.h"

namespace lathe::cuda {

struct CudaProgram {
  Trace trace;  // as replayed
  bool default_schedule = false;
  // Of the scheduled program (StructuralHashHex), what a runner reports.
  std::string structural_hash;
  Program lowered;
  CudaModule module;
};

// The default GPU schedule of `initial` for `target`: its threads per
// block at most the target's; when the CUDA code generator refuses that
// program for one of the target's limits (shared memory, registers, a
// lowered -max-... option), the same without tiles (the plain binding of
// every block), so that every workload has a default on every target.
// MakeCudaProgram and MakeKernelProgram both take theirs from here, so
// that the two name the same program. Errors: those of DefaultGpuSchedule,
// replay and lowering, and the code generator's for the untiled schedule.
absl::StatusOr<Trace> DefaultCudaTrace(const Program& initial,
                                       const Target& target);

// Errors: those of replay, lowering and GenerateCuda (limits included).
absl::StatusOr<CudaProgram> MakeCudaProgram(const Workload& workload,
                                            const Trace* trace,
                                            const Target& target);

}  // namespace lathe::cuda
