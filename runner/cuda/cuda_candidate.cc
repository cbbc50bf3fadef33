#include "runner/cuda/cuda_candidate.h"

#include <chrono>
#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/cuda/cuda_program.h"
#include "compiler/codegen/cuda/nvrtc_compiler.h"
#include "compiler/schedule/trace.h"
#include "compiler/workload/spec.h"
#include "runner/cuda/child_compile.h"

namespace lathe::runner {
namespace {

void Build(const proto::MeasureRequest& request, const Target& target,
           const CudaBuildOptions& options, CudaCandidate* out) {
  if (request.target() != target.ToString()) {
    out->status = absl::InvalidArgumentError(
        absl::StrCat("target ", request.target(), " is not this runner's ",
                     target.ToString()));
    return;
  }
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(request.workload());
  if (!workload.ok()) {
    out->status = workload.status();
    return;
  }
  std::optional<Trace> trace;
  if (request.has_trace()) {
    absl::StatusOr<Trace> parsed = Trace::FromProto(request.trace());
    if (!parsed.ok()) {
      out->status = parsed.status();
      return;
    }
    trace = *std::move(parsed);
  }
  absl::StatusOr<cuda::CudaProgram> program =
      cuda::MakeCudaProgram(*workload, trace ? &*trace : nullptr, target);
  if (!program.ok()) {
    out->status = program.status();
    return;
  }
  out->structural_hash = program->structural_hash;
  absl::StatusOr<std::string> cubin;
  if (options.compile_command.empty()) {
    absl::StatusOr<cuda::CompiledCuda> compiled =
        cuda::CompileCuda(program->module.source, target.cpu, /*cubin=*/true);
    cubin = compiled.ok()
                ? absl::StatusOr<std::string>(std::move(compiled->cubin))
                : absl::StatusOr<std::string>(compiled.status());
  } else {
    cubin = CompileInChild(options.compile_command, program->module.source,
                           options.compile_timeout_s);
  }
  if (!cubin.ok()) {
    out->status = cubin.status();
    return;
  }
  out->workload = *std::move(workload);
  out->module = std::move(program->module);
  out->cubin = *std::move(cubin);
}

}  // namespace

CudaCandidate BuildCudaCandidate(const proto::MeasureRequest& request,
                                 const Target& target,
                                 const CudaBuildOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  CudaCandidate candidate;
  try {
    Build(request, target, options, &candidate);
  } catch (const std::exception& e) {
    candidate.status =
        absl::InternalError(absl::StrCat("build: exception: ", e.what()));
  }
  candidate.build_ms = std::chrono::duration<double, std::milli>(
                           std::chrono::steady_clock::now() - start)
                           .count();
  return candidate;
}

}  // namespace lathe::runner
