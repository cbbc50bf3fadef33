// Compile time per GPU candidate, without a GPU (bench/README.md,
// "bench_gpu_compile"): points sampled from a workload's GPU design space as
// the search samples them (SampleTrace of DefaultGpuRules' spaces), each
// lowered, turned into CUDA C and compiled by NVRTC to a cubin, one at a
// time, as the tuner's compile children do. Prints the distribution of the
// NVRTC times and the slowest points' traces, so that what makes a
// candidate slow to build can be found and bounded here rather than in a
// lent device's minutes.
//
//   bench_gpu_compile [--arch sm_90] [--points N] [--seed S] [--slowest K]
//                     [--verbose] [--trace FILE ...] SPEC [SPEC ...]
//
// With --trace, the given schedules (trace files, text or JSON: one SPEC)
// are compiled instead of sampled points.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "compiler/codegen/cuda/cuda_codegen.h"
#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/codegen/cuda/nvrtc_compiler.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/replay.h"
#include "compiler/schedule/trace_file.h"
#include "compiler/workload/spec.h"
#include "tuner/space/design_space.h"

namespace lathe {
namespace {

struct Options {
  std::string arch = "sm_90";
  int points = 40;
  uint64_t seed = 1000;
  int slowest = 3;
  bool verbose = false;  // each refusal's reason
  std::vector<std::string> traces;
  std::vector<std::string> specs;
};

struct Compiled {
  double ms = 0;
  size_t source_bytes = 0;
  std::string trace;
};

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t i = static_cast<size_t>(q * (sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

// 0 when every sampled point was built or refused by a named limit, 1 when
// something else failed.
int MeasureSpec(const std::string& spec, const Options& options) {
  absl::StatusOr<Target> target = cuda::ArchTarget(options.arch);
  if (!target.ok()) {
    std::fprintf(stderr, "bench_gpu_compile: %s\n",
                 std::string(target.status().message()).c_str());
    return 1;
  }
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  absl::StatusOr<Program> initial =
      workload.ok() ? workload->InitialProgram() : workload.status();
  absl::StatusOr<std::vector<Trace>> spaces =
      initial.ok() ? tuner::GenerateDesignSpaces(*workload, *target,
                                                 tuner::DefaultGpuRules())
                   : initial.status();
  if (!spaces.ok()) {
    std::fprintf(stderr, "bench_gpu_compile: %s: %s\n", spec.c_str(),
                 std::string(spaces.status().message()).c_str());
    return 1;
  }
  std::vector<Compiled> compiled;
  int refused = 0, unsampled = 0, failed = 0;
  const bool given = !options.traces.empty();
  const int points =
      given ? static_cast<int>(options.traces.size()) : options.points;
  for (int p = 0; p < points; ++p) {
    absl::StatusOr<std::unique_ptr<TracedSchedule>> point;
    if (given) {
      absl::StatusOr<Trace> trace = ReadTraceFile(options.traces[p]);
      point = trace.ok() ? ReplayTrace(*trace, *initial) : trace.status();
    } else {
      Trace space = (*spaces)[p % spaces->size()];
      space.decisions.clear();
      point = SampleTrace(space, *initial, {}, options.seed + p);
    }
    if (!point.ok()) {
      ++unsampled;
      if (given)
        std::fprintf(stderr, "  %s: %s\n", options.traces[p].c_str(),
                     std::string(point.status().message()).c_str());
      continue;
    }
    absl::StatusOr<Program> lowered = LowerProgram((*point)->program());
    absl::StatusOr<cuda::CudaModule> module =
        lowered.ok() ? cuda::GenerateCuda(*lowered, *target) : lowered.status();
    if (!module.ok()) {
      if (module.status().code() == absl::StatusCode::kFailedPrecondition) {
        ++refused;
        if (options.verbose)
          std::printf("  %s refused: %s\n",
                      given ? options.traces[p].c_str()
                            : absl::StrCat("point ", p).c_str(),
                      std::string(module.status().message()).c_str());
      } else {
        ++failed;
        std::fprintf(stderr, "  point %d: %s\n", p,
                     std::string(module.status().message()).c_str());
      }
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<cuda::CompiledCuda> built =
        cuda::CompileCuda(module->source, options.arch, /*cubin=*/true);
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    if (!built.ok()) {
      ++failed;
      std::fprintf(stderr, "  point %d: %s\n", p,
                   std::string(built.status().message()).c_str());
      continue;
    }
    if (options.verbose && given)
      std::printf("  %s: %.0f ms\n", options.traces[p].c_str(), ms);
    compiled.push_back({ms, module->source.size(), (*point)->trace().ToText()});
  }
  std::vector<double> times;
  double total = 0;
  for (const Compiled& c : compiled) {
    times.push_back(c.ms);
    total += c.ms;
  }
  std::sort(times.begin(), times.end());
  std::printf(
      "%s (%s): %zu compiled, %d refused by a limit, %d not sampled, %d "
      "failed\n",
      spec.c_str(), options.arch.c_str(), compiled.size(), refused, unsampled,
      failed);
  if (!compiled.empty()) {
    std::printf(
        "  NVRTC ms: mean %.0f  p50 %.0f  p90 %.0f  max %.0f  (sum %.1f s)\n",
        total / compiled.size(), Percentile(times, 0.5), Percentile(times, 0.9),
        times.back(), total / 1000);
  }
  std::sort(compiled.begin(), compiled.end(),
            [](const Compiled& a, const Compiled& b) { return a.ms > b.ms; });
  for (int i = 0; i < options.slowest && i < static_cast<int>(compiled.size());
       ++i) {
    std::printf("  slowest %d: %.0f ms, %zu bytes of CUDA C\n%s\n", i + 1,
                compiled[i].ms, compiled[i].source_bytes,
                compiled[i].trace.c_str());
  }
  return failed == 0 ? 0 : 1;
}

int Main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--arch" && has_value) {
      options.arch = argv[++i];
    } else if ((arg == "--points" || arg == "--slowest") && has_value) {
      int value = 0;
      if (!absl::SimpleAtoi(argv[++i], &value) || value < 0 || value > 100000) {
        std::fprintf(stderr, "bench_gpu_compile: %s wants 0-100000\n",
                     arg.c_str());
        return 1;
      }
      (arg == "--points" ? options.points : options.slowest) = value;
    } else if (arg == "--seed" && has_value) {
      if (!absl::SimpleAtoi(argv[++i], &options.seed)) {
        std::fprintf(stderr, "bench_gpu_compile: --seed wants a number\n");
        return 1;
      }
    } else if (arg == "--trace" && has_value) {
      options.traces.push_back(argv[++i]);
    } else if (arg == "--verbose") {
      options.verbose = true;
    } else if (!arg.empty() && arg[0] != '-') {
      options.specs.push_back(arg);
    } else {
      std::fprintf(
          stderr,
          "usage: bench_gpu_compile [--arch sm_90] [--points N] "
          "[--seed S] [--slowest K] [--verbose] [--trace FILE ...] SPEC "
          "[SPEC ...]\n");
      return 1;
    }
  }
  if (options.specs.empty()) {
    std::fprintf(stderr, "bench_gpu_compile: no workload spec given\n");
    return 1;
  }
  if (absl::Status nvrtc = cuda::CheckNvrtc(); !nvrtc.ok()) {
    std::fprintf(stderr, "bench_gpu_compile: %s\n",
                 std::string(nvrtc.message()).c_str());
    return 1;
  }
  int status = 0;
  for (const std::string& spec : options.specs)
    status |= MeasureSpec(spec, options);
  return status;
}

}  // namespace
}  // namespace lathe

int main(int argc, char** argv) { return lathe::Main(argc, argv); }
