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

// Errors: those of replay, lowering and GenerateCuda (limits included).
absl::StatusOr<CudaProgram> MakeCudaProgram(const Workload& workload,
                                            const Trace* trace,
                                            const Target& target);

}  // namespace lathe::cuda
