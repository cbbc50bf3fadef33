#include "cli/lower_command.h"

#include <cstdio>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "cli/trace_file.h"
#include "cli/workload_args.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/default_schedule.h"
#include "compiler/schedule/replay.h"

namespace lathe::cli {
namespace {

struct LowerOptions {
  WorkloadArgs workload;
  std::string trace_path;
  bool show_trace = false;
  bool lowered = false;
  bool print_after_each = false;
  bool use_default = false;
  int64_t vector_width = 16;
  bool llvm_ir = false;
  std::string target = "host";
};

// Prints the program, or with --lowered (or --print-after-each) the flat loop
// program that the lowering pipeline makes of it.
absl::Status PrintResult(const LowerOptions& options, const Program& program) {
  if (options.llvm_ir) {
    // The module the CPU back end builds, before LLVM's optimizer: what the
    // golden tests of code generation check (tests/lit/codegen/).
    absl::StatusOr<Target> target = ParseTarget(options.target);
    if (!target.ok()) return target.status();
    absl::StatusOr<Program> lowered = LowerProgram(program);
    if (!lowered.ok()) return lowered.status();
    absl::StatusOr<std::string> ir =
        GenerateLLVMIR(*lowered, *target, {}, /*optimize=*/false);
    if (!ir.ok()) return ir.status();
    std::fputs(ir->c_str(), stdout);
    return absl::OkStatus();
  }
  if (!options.lowered && !options.print_after_each) {
    std::fputs(PrintProgram(program).c_str(), stdout);
    return absl::OkStatus();
  }
  lathe::LowerOptions lower_options;
  std::string passes;
  lower_options.print_after_each = options.print_after_each;
  lower_options.print_to = &passes;
  absl::StatusOr<Program> lowered = LowerProgram(program, lower_options);
  if (!lowered.ok()) return lowered.status();
  if (options.print_after_each) {
    std::fputs(passes.c_str(), stdout);
    return absl::OkStatus();  // the last pass's program is the lowered one
  }
  std::fputs(PrintProgram(*lowered).c_str(), stdout);
  return absl::OkStatus();
}

absl::Status RunLower(const LowerOptions& options) {
  absl::StatusOr<Workload> workload = options.workload.Resolve();
  if (!workload.ok()) return workload.status();
  absl::StatusOr<Program> program = workload->InitialProgram();
  if (!program.ok()) return program.status();
  absl::StatusOr<Trace> trace;
  std::string trace_name = options.trace_path;
  if (!options.trace_path.empty()) {
    trace = LoadTraceFor(options.trace_path, *workload);
    if (!trace.ok()) return trace.status();
  } else if (options.use_default) {
    // The schedule used when no trace is given; replayed below like a file,
    // so what is printed is what a stored default trace would give.
    DefaultScheduleOptions default_options;
    default_options.vector_width = options.vector_width;
    std::vector<std::string> skipped;
    trace = DefaultSchedule(*program, default_options, &skipped);
    if (!trace.ok()) return trace.status();
    trace->workload = workload->CanonicalForm();
    trace_name = "of the default schedule";
    if (options.show_trace) {
      for (const std::string& line : skipped) {
        std::printf("# default schedule skipped %s\n", line.c_str());
      }
    }
  } else {
    return PrintResult(options, *program);
  }
  auto scheduled = ReplayTrace(*trace, *program);
  if (!scheduled.ok()) {
    return absl::Status(
        scheduled.status().code(),
        absl::StrCat("trace ", trace_name, ": ", scheduled.status().message()));
  }
  if (options.show_trace) {
    std::printf("# trace\n%s\n", (*scheduled)->trace().ToText().c_str());
  }
  std::printf("# structural hash %s\n",
              StructuralHashHex((*scheduled)->program()).c_str());
  return PrintResult(options, (*scheduled)->program());
}

}  // namespace

void AddLowerCommand(CLI::App& app) {
  auto options = std::make_shared<LowerOptions>();
  CLI::App* command = app.add_subcommand(
      "lower", "print a workload's loop program, optionally after a trace");
  options->workload.AddTo(command, /*spec_required=*/true);
  command->add_option("--trace", options->trace_path,
                      "a trace file (JSON, or the text --show-trace prints) to "
                      "replay before printing");
  // --default with --trace, or --vector-width without --default, would be
  // ignored without a word.
  CLI::Option* use_default =
      command
          ->add_flag("--default", options->use_default,
                     "without --trace: replay the default schedule (parallel "
                     "outer loops, vectorized inner loop)")
          ->excludes("--trace");
  command
      ->add_option("--vector-width", options->vector_width,
                   "floats per vector for --default (16: AVX-512, "
                   "8: AVX2, 4: SSE)")
      ->check(CLI::Range(int64_t{1}, int64_t{1024}))
      ->needs(use_default);
  command->add_flag("--show-trace", options->show_trace,
                    "also print the replayed trace");
  command->add_flag("--lowered", options->lowered,
                    "print the lowered program (blocks lowered to loops, "
                    "buffers compacted, simplified)");
  CLI::Option* print_after_each =
      command->add_flag("--print-after-each", options->print_after_each,
                        "print the program after each lowering pass");
  CLI::Option* llvm_ir =
      command
          ->add_flag("--llvm-ir", options->llvm_ir,
                     "print the LLVM IR the CPU back end generates for the "
                     "lowered program (before LLVM's optimizer)")
          ->excludes(print_after_each);
  command
      ->add_option("--target", options->target,
                   "the CPU target of --llvm-ir, e.g. \"llvm "
                   "-mcpu=skylake-avx512\" (default: host)")
      ->needs(llvm_ir);
  SetAction(command, [options] { return RunLower(*options); });
}

}  // namespace lathe::cli
