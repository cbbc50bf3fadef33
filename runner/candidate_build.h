// Building a candidate for measurement: parse the workload and the target
// (which must run here), replay the trace (none: the target's default
// schedule), lower, and compile with the JIT (compiler/codegen/llvm/jit.h).
// What a worker does first for every request (measure_worker.h), and what
// BuildAhead (build_ahead.h) does before a request arrives.
//
// Thread-safe: builds may run on several threads at once; they share the
// JIT's session and its cache, so the same program built twice is the same
// kernel.
// Tests: tests/runner/candidate_build_test.cc.
#pragma once

#include <optional>
#include <string>

#include "compiler/codegen/llvm/jit.h"
#include "compiler/workload/workload.h"
#include "proto/measure.pb.h"
#include "proto/trace.pb.h"

namespace lathe::runner {

struct CandidateBuild {
  // When the build failed, the result to report: MEASURE_BUILD_ERROR with
  // what failed ("workload: ...", "trace: ...", "code generation: ..."), or
  // MEASURE_RUN_ERROR when the worker ran out of memory; with the
  // structural hash when the trace replayed.
  proto::MeasureResult failure;
  std::optional<Workload> workload;
  std::optional<CompiledKernel> kernel;  // set exactly when the build succeeded
  std::string structural_hash;  // of the scheduled program, once replayed
  double build_ms = 0;
  // Built before its request arrived (BuildAhead), on another thread or
  // while this one waited for another build.
  bool built_ahead = false;

  bool ok() const { return kernel.has_value(); }
};

// Builds the kernel of (workload spec, trace, target string); `trace` null:
// the default schedule. Never throws (std::bad_alloc included).
CandidateBuild BuildForMeasurement(const std::string& workload_spec,
                                   const proto::Trace* trace,
                                   const std::string& target);

// A build's request, without what only measuring needs.
inline CandidateBuild BuildForMeasurement(
    const proto::MeasureRequest& request) {
  return BuildForMeasurement(request.workload(),
                             request.has_trace() ? &request.trace() : nullptr,
                             request.target());
}

// "exceeded the memory limit of N MiB" (the process's RLIMIT_AS), or "ran
// out of memory" when it has none: what a std::bad_alloc in a worker means.
std::string MemoryLimitText();

}  // namespace lathe::runner
