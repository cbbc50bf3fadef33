// Building a candidate for measurement: parse the workload and the target
// (which must run here), replay the trace (none: the target's default
// schedule), lower, and compile with the JIT (compiler/codegen/llvm/jit.h).
// A program that packs a layout-free input at the root is split first
// (compiler/codegen/prepack_split.h): the pre-packs are compiled beside the
// kernel, to run once before it is checked and timed.
// What a worker does first for every request (measure_worker.h), and what
// BuildAhead (build_ahead.h) does before a request arrives.
//
// Thread-safe: builds may run on several threads at once; they share the
// JIT's session and its cache, so the same program built twice is the same
// kernel.
// Tests: tests/runner/candidate_build_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/codegen/llvm/jit.h"
#include "compiler/codegen/prepacked_kernel.h"
#include "compiler/workload/workload.h"
#include "proto/measure.pb.h"
#include "proto/trace.pb.h"

namespace lathe::runner {

// A layout-free input that the kernel takes packed (prepack_split.h), with
// the compiled copy that packs it.
using CandidatePrepack = CompiledPrepack;

struct CandidateBuild {
  // When the build failed, the result to report: MEASURE_BUILD_ERROR with
  // what failed ("workload: ...", "trace: ...", "code generation: ..."), or
  // MEASURE_RUN_ERROR when the worker ran out of memory; with the
  // structural hash when the trace replayed.
  proto::MeasureResult failure;
  std::optional<Workload> workload;
  std::optional<CompiledKernel> kernel;  // set exactly when the build succeeded
  // When the scheduled program packs layout-free inputs at the root, the
  // kernel is the main kernel of its split (compiler/codegen/prepack_split.h)
  // and takes those inputs packed: run each prepack once on the input, then
  // the kernel with the packed buffers in the inputs' places. Empty for
  // every other kernel (it takes the workload's parameters as they are).
  std::vector<CandidatePrepack> prepacks;
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
