#include "runner/candidate_build.h"

#include <sys/resource.h>

#include <chrono>
#include <exception>
#include <new>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/kernel_header.h"
#include "compiler/codegen/kernel_program.h"
#include "compiler/codegen/prepacked_kernel.h"
#include "compiler/schedule/trace.h"
#include "compiler/workload/spec.h"

namespace lathe::runner {
namespace {

CandidateBuild Failed(proto::MeasureStatus status, absl::string_view prefix,
                      absl::string_view message,
                      std::string structural_hash = "") {
  CandidateBuild build;
  build.failure.set_status(status);
  build.failure.set_error(absl::StrCat(prefix, message));
  build.failure.set_structural_hash(structural_hash);
  build.structural_hash = std::move(structural_hash);
  return build;
}

CandidateBuild BuildUnguarded(const std::string& workload_spec,
                              const proto::Trace* trace_proto,
                              const std::string& target_text) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(workload_spec);
  if (!workload.ok()) {
    return Failed(proto::MEASURE_BUILD_ERROR,
                  "workload: ", workload.status().message());
  }
  absl::StatusOr<Target> target = ParseTarget(target_text);
  if (!target.ok())
    return Failed(proto::MEASURE_BUILD_ERROR,
                  "target: ", target.status().message());
  // Before compiling: code for features this machine lacks would die of an
  // illegal instruction instead of failing cleanly.
  if (absl::Status st = CheckRunnableHere(*target); !st.ok()) {
    return Failed(proto::MEASURE_BUILD_ERROR, "target: ", st.message());
  }
  std::optional<Trace> trace;
  if (trace_proto != nullptr) {
    absl::StatusOr<Trace> parsed = Trace::FromProto(*trace_proto);
    if (!parsed.ok())
      return Failed(proto::MEASURE_BUILD_ERROR,
                    "trace: ", parsed.status().message());
    trace = *std::move(parsed);
  }
  absl::StatusOr<KernelProgram> program =
      MakeKernelProgram(*workload, trace ? &*trace : nullptr, *target);
  if (!program.ok())
    return Failed(proto::MEASURE_BUILD_ERROR, "", program.status().message());
  CodegenOptions codegen;
  codegen.function_name = DefaultFunctionName(*workload);
  CandidateBuild build;
  absl::StatusOr<PrepackedKernel> kernel =
      CompilePrepacked(*program, *target, codegen);
  if (!kernel.ok()) {
    return Failed(proto::MEASURE_BUILD_ERROR, "", kernel.status().message(),
                  program->structural_hash);
  }
  build.prepacks = std::move(kernel->prepacks);
  build.workload = *std::move(workload);
  build.kernel = std::move(kernel->main);
  build.structural_hash = program->structural_hash;
  build.build_ms = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  return build;
}

}  // namespace

std::string MemoryLimitText() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    return absl::StrCat("exceeded the memory limit of ", limit.rlim_cur >> 20,
                        " MiB");
  }
  return "ran out of memory";
}

CandidateBuild BuildForMeasurement(const std::string& workload_spec,
                                   const proto::Trace* trace,
                                   const std::string& target) {
  try {
    return BuildUnguarded(workload_spec, trace, target);
  } catch (const std::bad_alloc&) {
    CandidateBuild failed =
        Failed(proto::MEASURE_RUN_ERROR, "", MemoryLimitText());
    failed.failure.set_over_limit(true);
    return failed;
  } catch (const std::exception& e) {
    return Failed(proto::MEASURE_RUN_ERROR, "exception: ", e.what());
  }
}

}  // namespace lathe::runner
