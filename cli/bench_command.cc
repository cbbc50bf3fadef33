#include "cli/bench_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "cli/gpu_bench.h"
#include "cli/json_text.h"
#include "cli/model_bench.h"
#include "cli/time_text.h"
#include "cli/trace_file.h"
#include "cli/workload_args.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/kernel_header.h"
#include "compiler/codegen/kernel_program.h"
#include "compiler/codegen/llvm/jit.h"
#include "compiler/codegen/prepacked_kernel.h"
#include "compiler/measure/reference_check.h"
#include "compiler/measure/timing.h"
#include "compiler/runtime/lathe_runtime.h"
#include "compiler/schedule/trace.h"
#include "compiler/target/target_info.h"
#include "compiler/workload/flop_count.h"
#include "database/database.h"
#include "runner/measurable_target.h"
#include "tuner/search/measurement_record.h"

namespace lathe::cli {
namespace {

struct BenchOptions {
  WorkloadArgs workload;
  std::string trace_path;
  std::string target = "host";
  int threads = 0;  // 0: the target's
  bool json = false;
  double min_time_s = 0.5;
  int repeats = 10;
  std::string db_path;  // empty: do not record
  std::string job;
  // For a model (the positional argument names an .onnx file).
  std::vector<std::string> shapes;
  int runs = 20;
  bool compatible = false;
  // The options given on the command line, by name, to refuse those of the
  // other kind of bench.
  std::vector<std::string> given;
};

bool NamesAModel(const std::string& spec) {
  return spec.size() > 5 && spec.compare(spec.size() - 5, 5, ".onnx") == 0;
}

bool Given(const BenchOptions& options, const std::string& name) {
  return std::find(options.given.begin(), options.given.end(), name) !=
         options.given.end();
}

// `lathe bench MODEL.onnx`: the options of a model bench, after refusing
// those that only a kernel bench takes.
absl::Status RunBenchOfModel(const BenchOptions& options) {
  for (const char* name :
       {"--trace", "--job", "--expr", "--dims", "--min-time", "--repeats"}) {
    if (Given(options, name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name,
                       " is for one kernel's bench; a model takes --runs, --db "
                       "(kernels from it), --shape, --threads, --target"));
    }
  }
  ModelBenchOptions model;
  model.model.path = options.workload.spec;
  model.model.shapes = options.shapes;
  model.db_path = options.db_path;
  model.target = options.target;
  model.threads = options.threads;
  model.runs = options.runs;
  model.compatible = options.compatible;
  model.json = options.json;
  return RunModelBench(model);
}

// Stores the measurement as a record of `db_path` (created when absent).
absl::Status RecordMeasurement(const BenchOptions& options,
                               const Workload& workload, const Target& target,
                               const Trace& trace,
                               const std::string& structural_hash,
                               const std::vector<double>& times_s,
                               proto::MeasureStatus status,
                               const std::string& error) {
  proto::MeasureResult result;
  for (double t : times_s) result.add_times_s(t);
  result.set_status(status);
  result.set_error(error);
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  const proto::Record record = tuner::MeasurementRecord(
      workload,
      TargetInfoOf(target, runner::MeasuringDeviceDescription(target)), trace,
      structural_hash, result,
      {absl::StrCat("lathe bench@", host), LATHE_VERSION, options.job});
  db::OpenOptions open;
  open.mode = db::OpenOptions::Mode::kCreate;
  absl::StatusOr<std::unique_ptr<db::Database>> db =
      db::Database::Open(options.db_path, open);
  if (!db.ok()) return db.status();
  return (*db)->Commit({record}).status();
}

// What a kernel's bench prints, on a CPU or a GPU.
struct BenchReport {
  std::string workload;  // canonical
  const Target* target = nullptr;
  std::string schedule;  // "default" or "trace"
  std::string structural_hash;
  size_t prepacked_inputs = 0;
  double compile_ms = 0;
  std::string compile_detail;  // "schedule+lower 1.0, codegen ..."
  std::string device;          // a GPU's name; empty on a CPU
  TimingStats stats;
  int64_t flops = 0;
};

void PrintBench(const BenchReport& r, bool json) {
  const TimingStats& stats = r.stats;
  const double gflops =
      stats.median_s > 0 ? static_cast<double>(r.flops) / stats.median_s * 1e-9
                         : 0;
  if (json) {
    std::printf(
        "{\"workload\": %s, \"target\": %s, %s\"threads\": %d, "
        "\"schedule\": %s, "
        "\"structural_hash\": %s, \"prepacked_inputs\": %zu, "
        "\"reference_check\": \"pass\", \"compile_ms\": %.3f, "
        "\"median_ms\": %.6f, \"min_ms\": %.6f, \"p90_ms\": %.6f, \"mean_ms\": "
        "%.6f, "
        "\"stddev_ms\": %.6f, \"samples\": %zu, \"calls_per_sample\": %lld, "
        "\"flops\": %lld, "
        "\"gflops\": %.3f}\n",
        JsonString(r.workload).c_str(),
        JsonString(r.target->ToString()).c_str(),
        r.device.empty()
            ? ""
            : absl::StrCat("\"device\": ", JsonString(r.device), ", ").c_str(),
        r.target->num_threads, JsonString(r.schedule).c_str(),
        JsonString(r.structural_hash).c_str(), r.prepacked_inputs, r.compile_ms,
        stats.median_s * 1e3, stats.min_s * 1e3, stats.p90_s * 1e3,
        stats.mean_s * 1e3, stats.stddev_s * 1e3, stats.samples_s.size(),
        static_cast<long long>(stats.calls_per_sample),
        static_cast<long long>(r.flops), gflops);
    return;
  }
  std::printf("workload  %s\n", r.workload.c_str());
  std::printf("target    %s\n", r.target->ToString().c_str());
  if (!r.device.empty()) std::printf("device    %s\n", r.device.c_str());
  std::printf("schedule  %s (structural hash %s)\n", r.schedule.c_str(),
              r.structural_hash.c_str());
  std::printf("check     matches the reference\n");
  if (r.prepacked_inputs > 0) {
    std::printf(
        "prepack   %zu layout-free input(s) packed once, before the check and "
        "the timing (only the kernel is timed)\n",
        r.prepacked_inputs);
  }
  std::printf("compile   %.1f ms (%s)\n", r.compile_ms,
              r.compile_detail.c_str());
  // One unit for the line, the median's.
  const TimeUnit unit = TimeUnitFor(stats.median_s);
  std::printf(
      "time      median %s  min %s  p90 %s  stddev %s  (%zu samples x %lld "
      "calls)\n",
      TimeIn(stats.median_s, unit).c_str(), TimeIn(stats.min_s, unit).c_str(),
      TimeIn(stats.p90_s, unit).c_str(), TimeIn(stats.stddev_s, unit).c_str(),
      stats.samples_s.size(), static_cast<long long>(stats.calls_per_sample));
  if (r.device.empty()) {
    std::printf("gflops    %.2f (%lld flop, %d threads)\n", gflops,
                static_cast<long long>(r.flops), r.target->num_threads);
  } else {
    std::printf("gflops    %.2f (%lld flop)\n", gflops,
                static_cast<long long>(r.flops));
  }
}

// A cuda target's bench (gpu_bench.h): recorded and printed as a CPU
// kernel's is.
absl::Status RunGpuBench(const BenchOptions& options, const Workload& workload,
                         const Target& target, const Trace* trace) {
  LATHE_ASSIGN_OR_RETURN(GpuBench bench,
                         BenchOnGpu(workload, trace, target, options.min_time_s,
                                    std::max(1, options.repeats)));
  const proto::MeasureResult& measured = bench.measured;
  const std::vector<double> samples(measured.times_s().begin(),
                                    measured.times_s().end());
  if (!options.db_path.empty()) {
    LATHE_RETURN_IF_ERROR(RecordMeasurement(
        options, workload, target, bench.trace, measured.structural_hash(),
        samples, measured.status(), measured.error()));
  }
  if (measured.status() == proto::MEASURE_WRONG_RESULT) {
    return absl::FailedPreconditionError(
        absl::StrCat("reference check failed: ", measured.error()));
  }
  if (measured.status() != proto::MEASURE_OK || samples.empty()) {
    return absl::InternalError(
        absl::StrCat("the kernel on ", bench.device, ": ", measured.error()));
  }
  LATHE_ASSIGN_OR_RETURN(int64_t flops, FlopCount(workload));
  BenchReport report;
  report.workload = workload.CanonicalForm();
  report.target = &target;
  report.schedule = bench.default_schedule ? "default" : "trace";
  report.structural_hash = measured.structural_hash();
  report.compile_ms = measured.build_ms();
  report.compile_detail = "schedule, lower, CUDA C and NVRTC to a cubin";
  report.device = bench.device;
  report.stats = SummarizeSamples(samples);
  report.flops = flops;
  PrintBench(report, options.json);
  return absl::OkStatus();
}

absl::Status RunBench(const BenchOptions& options) {
  if (NamesAModel(options.workload.spec)) return RunBenchOfModel(options);
  for (const char* name : {"--shape", "--runs", "--compatible"}) {
    if (Given(options, name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " is for a model's bench (MODEL.onnx)"));
    }
  }
  if (!options.job.empty() && options.db_path.empty()) {
    return absl::InvalidArgumentError(
        "--job names the record of --db: give --db too");
  }
  absl::StatusOr<Workload> workload = options.workload.Resolve();
  if (!workload.ok()) return workload.status();
  absl::StatusOr<Target> target = ParseTarget(options.target);
  if (!target.ok()) return target.status();
  if (options.threads > 0) target->num_threads = options.threads;
  // Refuse before compiling: running code for features this machine lacks
  // would crash on an illegal instruction, not fail cleanly; more threads
  // than CPUs would time the threads' turns, not the kernel.
  if (absl::Status st = runner::CheckMeasurableHere(*target); !st.ok())
    return st;

  std::unique_ptr<Trace> trace;
  if (!options.trace_path.empty()) {
    absl::StatusOr<Trace> loaded = LoadTraceFor(options.trace_path, *workload);
    if (!loaded.ok()) return loaded.status();
    trace = std::make_unique<Trace>(*std::move(loaded));
  }
  if (target->IsCuda())
    return RunGpuBench(options, *workload, *target, trace.get());
  absl::StatusOr<KernelProgram> kernel =
      MakeKernelProgram(*workload, trace.get(), *target);
  if (!kernel.ok()) {
    if (trace == nullptr) return kernel.status();
    return absl::Status(kernel.status().code(),
                        absl::StrCat("trace ", options.trace_path, ": ",
                                     kernel.status().message()));
  }
  // A program that packs layout-free inputs at the root is split as a
  // tuning run's worker splits it: the prepacks run once, before the check
  // and the samples, and only the main kernel is timed.
  CodegenOptions codegen;
  codegen.function_name = DefaultFunctionName(*workload);
  absl::StatusOr<PrepackedKernel> compiled =
      CompilePrepacked(*kernel, *target, codegen);
  if (!compiled.ok()) return compiled.status();
  double compile_ms = kernel->schedule_ms + compiled->main.times().total_ms();
  for (const CompiledPrepack& p : compiled->prepacks)
    compile_ms += p.kernel.times().total_ms();
  const size_t prepacked_inputs = compiled->prepacks.size();

  PackedArguments packed(compiled->prepacks);
  KernelCall call = [&](const std::vector<float*>& args) -> absl::Status {
    absl::StatusOr<std::vector<float*>> kernel_args = packed.Pack(args);
    if (!kernel_args.ok()) return kernel_args.status();
    return compiled->main.Run(*kernel_args);
  };
  if (absl::Status st = CheckAgainstReference(*workload, call, /*seed=*/1);
      !st.ok()) {
    if (!options.db_path.empty()) {
      LATHE_RETURN_IF_ERROR(RecordMeasurement(
          options, *workload, *target, kernel->trace, kernel->structural_hash,
          {}, proto::MEASURE_WRONG_RESULT, std::string(st.message())));
    }
    return absl::Status(st.code(),
                        absl::StrCat("reference check failed: ", st.message()));
  }

  // Buffers for timing: the check's values do not matter for time, only that
  // inputs are finite (denormals and NaNs can be slow); zeros are.
  std::vector<std::vector<float>> storage;
  std::vector<float*> args;
  for (const auto* list : {&workload->inputs(), &workload->outputs()}) {
    for (const te::Tensor& t : *list) {
      int64_t n = 1;
      for (int64_t d : t.shape()) n *= d;
      storage.emplace_back(n, 0.5f);
    }
  }
  for (std::vector<float>& s : storage) args.push_back(s.data());
  absl::StatusOr<std::vector<float*>> timed_args = packed.Pack(args);
  if (!timed_args.ok()) return timed_args.status();
  lathe_set_num_threads(target->num_threads);
  TimingOptions timing;
  timing.min_time_s = options.min_time_s;
  timing.min_samples = std::max(1, options.repeats);
  timing.max_samples = std::max(timing.max_samples, timing.min_samples);
  absl::StatusOr<TimingStats> stats =
      TimeRepeatedly([&] { return compiled->main.Run(*timed_args); }, timing);
  if (!stats.ok()) return stats.status();
  absl::StatusOr<int64_t> flops = FlopCount(*workload);
  if (!flops.ok()) return flops.status();
  if (!options.db_path.empty()) {
    LATHE_RETURN_IF_ERROR(RecordMeasurement(
        options, *workload, *target, kernel->trace, kernel->structural_hash,
        stats->samples_s, proto::MEASURE_OK, ""));
  }
  const CompileTimes& t = compiled->main.times();
  BenchReport report;
  report.workload = workload->CanonicalForm();
  report.target = &*target;
  report.schedule = kernel->default_schedule ? "default" : "trace";
  report.structural_hash = kernel->structural_hash;
  report.prepacked_inputs = prepacked_inputs;
  report.compile_ms = compile_ms;
  report.compile_detail = absl::StrFormat(
      "schedule+lower %.1f, codegen %.1f, O3 %.1f, machine code %.1f, link "
      "%.1f",
      kernel->schedule_ms, t.codegen_ms, t.optimize_ms, t.machine_code_ms,
      t.link_ms);
  report.stats = *std::move(stats);
  report.flops = *flops;
  PrintBench(report, options.json);
  return absl::OkStatus();
}

}  // namespace

void AddBenchCommand(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* command =
      app.add_subcommand("bench",
                         "compile one kernel in-process, check it against the "
                         "reference and time it; or time a model (MODEL.onnx) "
                         "and the share of each of its tasks");
  options->workload.AddTo(command, /*spec_required=*/true);
  command->add_option(
      "--trace", options->trace_path,
      "a trace file (JSON or text form) to schedule with; default: the "
      "default schedule");
  command->add_option("--target", options->target,
                      "target, e.g. host, \"llvm -mcpu=haswell\" or cuda (this "
                      "machine's GPU) (default: host); it must run here");
  command
      ->add_option(
          "--threads", options->threads,
          "threads of parallel loops (default: the target's; host: every CPU)")
      ->check(WholeNumber(1, 1024));
  command->add_flag("--json", options->json, "print one JSON object");
  command
      ->add_option(
          "--min-time", options->min_time_s,
          "keep timing until the samples total this many seconds (default 0.5)")
      ->check(NonNegativeSeconds());
  command
      ->add_option("--repeats", options->repeats,
                   "at least this many samples (default 10)")
      ->check(WholeNumber(1, 1000000));
  command->add_option(
      "--db", options->db_path,
      "record the measurement in this database (created when absent); for a "
      "model: take its kernels from this database");
  command->add_option("--job", options->job,
                      "with --db: the job the record belongs to");
  command->add_option("--shape", options->shapes,
                      "model: NAME=D0,D1,...: the shape of an input whose "
                      "dimensions the model leaves symbolic (repeatable)");
  command
      ->add_option("--runs", options->runs,
                   "model: timed runs after the warm-up (default 20)")
      ->check(WholeNumber(1, 1000000));
  command->add_flag("--compatible", options->compatible,
                    "model: use records of compatible targets too (as "
                    "compile's --compatible)");
  SetAction(command, [options, command] {
    for (const CLI::Option* option : command->get_options()) {
      if (option->count() > 0) options->given.push_back(option->get_name());
    }
    return RunBench(*options);
  });
}

}  // namespace lathe::cli
