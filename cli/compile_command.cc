#include "cli/compile_command.h"

#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "cli/workload_args.h"
#include "compiler/codegen/kernel_header.h"
#include "compiler/codegen/kernel_library.h"
#include "compiler/codegen/kernel_program.h"
#include "compiler/codegen/target.h"
#include "compiler/schedule/trace.h"

namespace lathe::cli {
namespace {

struct CompileOptions {
  WorkloadArgs workload;
  std::string trace_path;
  std::string target = "host";
  std::string output;
  std::string header;
  std::string function;
};

absl::Status RunCompile(const CompileOptions& options) {
  // Cheap checks of the command line first, before any compilation.
  absl::StatusOr<LibraryKind> kind = LibraryKindForPath(options.output);
  if (!kind.ok()) return kind.status();
  absl::StatusOr<Workload> workload = options.workload.Resolve();
  if (!workload.ok()) return workload.status();
  std::string function =
      options.function.empty() ? DefaultFunctionName(*workload) : options.function;
  if (!IsCIdentifier(function)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--function ", function, ": not a C identifier"));
  }
  absl::StatusOr<Target> target = ParseTarget(options.target);
  if (!target.ok()) return target.status();
  if (absl::Status runnable = CheckRunnableHere(*target); !runnable.ok()) {
    std::fprintf(stderr, "lathe: warning: %s (compiling anyway: the output is for another machine)\n",
                 std::string(runnable.message()).c_str());
  }

  std::unique_ptr<Trace> trace;
  if (!options.trace_path.empty()) {
    absl::StatusOr<Trace> loaded = Trace::Load(options.trace_path);
    if (!loaded.ok()) return loaded.status();
    trace = std::make_unique<Trace>(*std::move(loaded));
  }
  absl::StatusOr<KernelProgram> kernel = MakeKernelProgram(*workload, trace.get(), *target);
  if (!kernel.ok()) {
    if (trace == nullptr) return kernel.status();
    return absl::Status(kernel.status().code(), absl::StrCat("trace ", options.trace_path, ": ",
                                                             kernel.status().message()));
  }
  if (absl::Status st = WriteKernelLibrary(*kernel, *target, function, options.output); !st.ok()) {
    return st;
  }
  if (!options.header.empty()) {
    absl::Status st = WriteFileBytes(
        options.header, KernelHeader(*workload, *kernel, *target, function, *kind));
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace

void AddCompileCommand(CLI::App& app) {
  auto options = std::make_shared<CompileOptions>();
  CLI::App* command = app.add_subcommand(
      "compile", "compile a workload's kernel to an object, static or shared library and a C header");
  options->workload.AddTo(command, /*spec_required=*/true);
  command->add_option("--trace", options->trace_path,
                      "a trace file (JSON) to schedule with; default: the default schedule");
  command->add_option("--target", options->target,
                      "target, e.g. host, \"llvm -mcpu=znver4 -num-threads=8\" (default: host)");
  command->add_option("-o,--output", options->output,
                      "output file: .o (kernel only), .a (kernel + runtime) or .so (needs cc)")
      ->required();
  command->add_option("--header", options->header, "where to write the C header");
  command->add_option("--function", options->function,
                      "the kernel's C symbol (default: from the workload, e.g. matmul_64x64x64)");
  SetAction(command, [options] { return RunCompile(*options); });
}

}  // namespace lathe::cli
