// Building a CUDA candidate for measurement: the request's workload parsed,
// its trace replayed (the default GPU schedule when it has none), lowered,
// turned into CUDA C and compiled to a cubin for the target's architecture,
// on the calling thread or in a child process with a deadline
// (child_compile.h). No device needed: what CudaMeasurer (cuda_measurer.h)
// does before it loads a candidate, and what a CUDA worker does ahead of the
// request (cuda_build_ahead.h). Thread-safe (NVRTC is).
// Tests: tests/runner/cuda/cuda_build_ahead_test.cc (no device needed).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/codegen/cuda/cuda_codegen.h"
#include "compiler/target/target.h"
#include "compiler/workload/workload.h"
#include "proto/measure.pb.h"

namespace lathe::runner {

struct CudaBuildOptions {
  // A command that compiles CUDA C (stdin) to a cubin (stdout) for the
  // target's architecture (child_compile.h), run with a deadline; empty:
  // NVRTC in this process, without one.
  std::vector<std::string> compile_command;
  double compile_timeout_s = 20;
};

struct CudaCandidate {
  // Ok, or what failed: a request of another target than `target`, the
  // workload, the trace, code generation (limits included), NVRTC;
  // DeadlineExceeded when the compilation ran past its deadline.
  absl::Status status;
  std::optional<Workload> workload;
  cuda::CudaModule module;
  std::string cubin;
  std::string structural_hash;  // of the scheduled program, once replayed
  double build_ms = 0;
  bool built_ahead = false;  // set by CudaBuildAhead

  bool ok() const { return status.ok(); }
};

// Builds the candidate of `request` (its workload, trace and target, which
// must be `target`'s canonical string). Never throws.
CudaCandidate BuildCudaCandidate(const proto::MeasureRequest& request,
                                 const Target& target,
                                 const CudaBuildOptions& options);

}  // namespace lathe::runner
