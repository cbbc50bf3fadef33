// `lathe compile`: kernels to an object, a static or a shared library and a
// C header. One workload with --trace (or the default schedule) is the
// single-kernel command; with --db, every workload's schedule comes from the
// tuning database through api/kernel_plan.h (the path the C++ API and the
// CMake function share), and all kernels go into one library and one
// header. One model (MODEL.onnx) becomes one library whose C function runs
// it (api/model_library.h). A cuda target (--target 'cuda -arch=sm_XX') takes
// one workload, planned the same way, and writes a host source with the cubin
// embedded, a cubin or PTX instead of a library (cli/cuda_compile.h).
#include "cli/compile_command.h"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "api/kernel_plan.h"
#include "api/model_library.h"
#include "cli/command.h"
#include "cli/cuda_compile.h"
#include "cli/json_text.h"
#include "cli/model_args.h"
#include "cli/output_paths.h"
#include "cli/staged_outputs.h"
#include "cli/trace_file.h"
#include "cli/workload_args.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/kernel_header.h"
#include "compiler/codegen/kernel_library.h"
#include "compiler/codegen/kernel_program.h"
#include "compiler/codegen/model_library.h"
#include "compiler/schedule/trace.h"
#include "compiler/workload/spec.h"
#include "database/database.h"

namespace lathe::cli {
namespace {

struct CompileOptions {
  std::vector<std::string> specs;
  std::string expr;
  std::string dims;
  std::string trace_path;
  std::string db_path;
  std::string target = "host";
  std::string output;
  std::string header;
  std::string function;
  std::string prefix;
  std::string misses;
  std::string manifest;
  std::vector<std::string> shapes;  // a model's --shape NAME=D0,D1,...
  bool require_tuned = false;
  bool compatible = false;
};

// One kernel of the output: the spec as given and its plan.
struct Entry {
  std::string spec;
  std::string function;
  std::optional<api::KernelPlan> plan;
  bool from_trace = false;
};

// Where an entry's schedule came from, for a header's comment: "database
// record 42", "trace" or "default".
std::string OriginText(const Entry& e) {
  if (e.plan->origin.tuned())
    return absl::StrCat("database record ", e.plan->origin.record_id);
  return e.from_trace ? "trace" : "default";
}

absl::StatusOr<std::vector<std::pair<std::string, Workload>>> ResolveWorkloads(
    const CompileOptions& options) {
  std::vector<std::pair<std::string, Workload>> workloads;
  for (const std::string& spec : options.specs) {
    absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
    if (!workload.ok()) {
      // Several specs: say which one.
      return absl::Status(
          workload.status().code(),
          absl::StrCat(spec, ": ", workload.status().message()));
    }
    workloads.emplace_back(spec, *std::move(workload));
  }
  if (!options.expr.empty() || !options.dims.empty()) {
    absl::StatusOr<Workload> workload =
        WorkloadArgs{"", options.expr, options.dims}.Resolve();
    if (!workload.ok()) return workload.status();
    workloads.emplace_back(workload->CanonicalForm(), *std::move(workload));
  }
  if (workloads.empty()) {
    return absl::InvalidArgumentError(
        "no workload: give one or more specs such as matmul:M=64,N=64,K=64, or "
        "--expr/--dims");
  }
  return workloads;
}

std::string ManifestKernel(const Entry& e) {
  const api::KernelPlan& plan = *e.plan;
  const api::KernelOrigin& o = plan.origin;
  std::string source;
  if (o.tuned()) {
    source = absl::StrCat(
        "\"source\": \"database\", \"record\": {\"id\": ", o.record_id,
        ", \"job\": ", JsonString(o.job),
        ", \"median_s\": ", absl::StrFormat("%.9g", o.median_s),
        ", \"structural_hash\": ", JsonString(o.structural_hash),
        ", \"target\": ", JsonString(o.record_target),
        ", \"exact_target\": ", o.exact_target ? "true" : "false", "}");
    if (!o.skipped_reason.empty()) {
      absl::StrAppend(&source,
                      ", \"skipped_reason\": ", JsonString(o.skipped_reason));
    }
  } else {
    source = absl::StrCat("\"source\": ",
                          e.from_trace ? "\"trace\"" : "\"default\"");
    if (!o.fallback_reason.empty()) {
      absl::StrAppend(&source,
                      ", \"fallback_reason\": ", JsonString(o.fallback_reason));
    }
  }
  return absl::StrCat(
      "{\"spec\": ", JsonString(e.spec),
      ", \"workload\": ", JsonString(plan.workload.CanonicalForm()),
      ", \"workload_key\": ", JsonString(plan.workload.Key()),
      ", \"function\": ", JsonString(e.function),
      ", \"target\": ", JsonString(plan.target.ToString()), ", ", source,
      ", \"structural_hash\": ", JsonString(plan.program.structural_hash), "}");
}

absl::Status WriteManifest(const CompileOptions& options, const Target& target,
                           const std::vector<Entry>& entries,
                           const std::string& path) {
  std::vector<std::string> kernels;
  for (const Entry& e : entries) kernels.push_back(ManifestKernel(e));
  std::string text = absl::StrCat(
      "{\"lathe_compile_manifest\": 1,\n \"target\": ",
      JsonString(target.ToString()), ",\n \"database\": ",
      options.db_path.empty() ? "null" : JsonString(options.db_path),
      ",\n \"compatible\": ", options.compatible ? "true" : "false",
      ",\n \"output\": ", JsonString(options.output), ",\n \"header\": ",
      options.header.empty() ? "null" : JsonString(options.header),
      ",\n \"kernels\": [\n  ", absl::StrJoin(kernels, ",\n  "), "\n]}\n");
  return WriteFileBytes(path, text);
}

absl::Status WriteMisses(const CompileOptions& options, const Target& target,
                         const std::vector<const Entry*>& untuned) {
  std::string text = absl::StrCat(
      "# lathe compile: workloads without a usable record for ",
      target.ToString(), " in ", options.db_path,
      "\n# tune them: lathe tune --workloads-file ", options.misses, " --db ",
      options.db_path, " --target '", target.ToString(), "'\n");
  for (const Entry* e : untuned)
    absl::StrAppend(&text, e->plan->workload.CanonicalForm(), "\n");
  return WriteFileBytes(options.misses, text);
}

// --misses and --require-tuned: writes the untuned entries' list when asked,
// and fails naming them when every one must be tuned. `what` names the
// entries in the message ("workloads", "tasks of model.onnx").
absl::Status CheckUntuned(const CompileOptions& options, const Target& target,
                          const std::vector<const Entry*>& untuned,
                          size_t total, const std::string& what) {
  if (!options.misses.empty()) {
    if (absl::Status st = WriteMisses(options, target, untuned); !st.ok())
      return st;
  }
  if (!options.require_tuned || untuned.empty()) return absl::OkStatus();
  std::vector<std::string> names;
  for (const Entry* e : untuned) names.push_back(e->spec);
  return absl::FailedPreconditionError(absl::StrCat(
      "--require-tuned: ", untuned.size(), " of ", total, " ", what,
      " have no usable record for ", target.ToString(), " in ", options.db_path,
      ": ", absl::StrJoin(names, ", "),
      options.misses.empty()
          ? " (--misses FILE lists them for lathe tune --workloads-file)"
          : absl::StrCat(" (listed in ", options.misses, ")")));
}

// The outputs, all or none: the library (`write_library` to its path),
// with --header the header (`header` of the header file's stem), with
// --manifest the manifest; staged, then committed together.
absl::Status WriteOutputs(
    const CompileOptions& options, const Target& target,
    const std::vector<Entry>& entries,
    const std::function<absl::Status(const std::string& path)>& write_library,
    const std::function<std::string(const std::string& stem)>& header) {
  StagedOutputs staged;
  if (absl::Status st = write_library(staged.Add(options.output)); !st.ok())
    return staged.Named(st);
  if (!options.header.empty()) {
    const std::string stem =
        std::filesystem::path(options.header).stem().string();
    if (absl::Status st =
            WriteFileBytes(staged.Add(options.header), header(stem));
        !st.ok()) {
      return staged.Named(st);
    }
  }
  if (!options.manifest.empty()) {
    if (absl::Status st = WriteManifest(options, target, entries,
                                        staged.Add(options.manifest));
        !st.ok()) {
      return staged.Named(st);
    }
  }
  return staged.Commit();
}

// The options that only mean something with --db.
absl::Status CheckDatabaseOnlyOptions(const CompileOptions& options) {
  if (options.db_path.empty() &&
      (options.require_tuned || !options.misses.empty() ||
       options.compatible)) {
    return absl::InvalidArgumentError(
        "--require-tuned, --misses and --compatible need --db (the tuning "
        "database)");
  }
  return absl::OkStatus();
}

// The --target, with a warning on stderr when this machine cannot run its
// code (a GPU's code is never run here by lathe compile: no warning).
absl::StatusOr<Target> CompileTarget(const CompileOptions& options, bool cuda) {
  absl::StatusOr<Target> target = ParseTarget(options.target);
  if (!target.ok()) return target.status();
  if (absl::Status runnable =
          cuda ? absl::OkStatus() : CheckRunnableHere(*target);
      !runnable.ok()) {
    std::fprintf(stderr,
                 "lathe: warning: %s (compiling anyway: the output is for "
                 "another machine)\n",
                 std::string(runnable.message()).c_str());
  }
  return target;
}

// The --db opened read-only; null without --db.
absl::StatusOr<std::unique_ptr<db::Database>> OpenDatabase(
    const CompileOptions& options) {
  if (options.db_path.empty()) return nullptr;
  db::OpenOptions open;
  open.mode = db::OpenOptions::Mode::kReadOnly;
  return db::Database::Open(options.db_path, open);
}

// True when the command names a model: one positional argument ending in
// .onnx.
bool NamesModel(const CompileOptions& options) {
  return options.specs.size() == 1 &&
         absl::EndsWith(options.specs.front(), ".onnx");
}

// The default entry name of a model: its file's stem with every character
// that cannot be in a C identifier made '_' ("resnet-18.onnx": resnet_18).
std::string DefaultModelFunction(const std::string& path) {
  std::string name = std::filesystem::path(path).stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    name = "model_" + name;
  return name;
}

// `lathe compile MODEL.onnx`: one library whose entry runs the model
// (api/model_library.h).
absl::Status RunCompileModel(const CompileOptions& options) {
  const std::string& model_path = options.specs.front();
  if (NamesCudaTarget(options.target)) {
    return absl::InvalidArgumentError(absl::StrCat(
        model_path,
        ": models compile for CPU targets only; a cuda target compiles one "
        "workload spec"));
  }
  // -o NAME.ll: the library's LLVM module as text, before LLVM's optimizer
  // (what the golden tests read); it has no header.
  const bool llvm_ir = absl::EndsWith(options.output, ".ll");
  absl::StatusOr<LibraryKind> kind =
      llvm_ir ? LibraryKind::kObject : LibraryKindForPath(options.output);
  if (!kind.ok()) return kind.status();
  if (llvm_ir && !options.header.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--header ", options.header, ": -o ", options.output,
                     " writes LLVM IR, which has no header"));
  }
  if (!options.expr.empty() || !options.dims.empty() ||
      !options.trace_path.empty() || !options.prefix.empty()) {
    return absl::InvalidArgumentError(
        "a model takes no --expr, --dims, --trace or --prefix (its kernels "
        "come from --db or the default schedules)");
  }
  if (absl::Status st = CheckDatabaseOnlyOptions(options); !st.ok()) return st;
  if (absl::Status st =
          CheckOutputPaths({{"--db", options.db_path}, {"model", model_path}},
                           {{"-o", options.output},
                            {"--header", options.header},
                            {"--manifest", options.manifest},
                            {"--misses", options.misses}});
      !st.ok()) {
    return st;
  }
  api::ModelLibraryOptions model_options;
  absl::StatusOr<std::map<std::string, std::vector<int64_t>>> shapes =
      ModelArgs{model_path, options.shapes}.InputShapes();
  if (!shapes.ok()) return shapes.status();
  model_options.input_shapes = *std::move(shapes);
  model_options.function_name = options.function.empty()
                                    ? DefaultModelFunction(model_path)
                                    : options.function;
  if (!IsCIdentifier(model_options.function_name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        options.function.empty() ? "the model's file name gives function "
                                 : "--function ",
        model_options.function_name,
        ": not a C identifier free to name the entry (keywords, main, _X..., "
        "__... and lathe, lathe_... are taken)",
        options.function.empty() ? "; name it with --function" : ""));
  }
  model_options.matching = options.compatible ? db::TargetMatching::kCompatible
                                              : db::TargetMatching::kExact;
  absl::StatusOr<Target> target = CompileTarget(options, /*cuda=*/false);
  if (!target.ok()) return target.status();
  absl::StatusOr<std::unique_ptr<db::Database>> opened = OpenDatabase(options);
  if (!opened.ok()) return opened.status();
  std::unique_ptr<db::Database> db = *std::move(opened);
  absl::StatusOr<std::unique_ptr<api::ModelLibraryPlan>> plan =
      api::ModelLibraryPlan::Make(model_path, db.get(), *target, model_options);
  if (!plan.ok()) return plan.status();
  const ModelLibrary& library = (*plan)->library();

  // The tasks as the kernel command's entries (misses, manifest).
  std::vector<Entry> entries;
  std::vector<const Entry*> untuned;
  for (size_t k = 0; k < (*plan)->tasks().size(); ++k) {
    const api::ModelLibraryTask& task = (*plan)->tasks()[k];
    entries.push_back(
        {task.workload, library.kernels[k].function_name, task.plan, false});
  }
  for (const Entry& e : entries) {
    if (db != nullptr && !e.plan->origin.tuned()) untuned.push_back(&e);
  }
  if (absl::Status st = CheckUntuned(options, *target, untuned, entries.size(),
                                     absl::StrCat("tasks of ", model_path));
      !st.ok()) {
    return st;
  }
  if (!untuned.empty()) {
    std::fprintf(stderr,
                 "lathe: warning: %zu of %zu tasks not tuned, using the "
                 "default schedule (--misses FILE lists them)\n",
                 untuned.size(), entries.size());
  }

  return WriteOutputs(
      options, *target, entries,
      [&](const std::string& path) {
        return WriteModelLibrary(library, *target, path);
      },
      [&](const std::string& stem) {
        return ModelLibraryHeader(library, *target, *kind, stem);
      });
}

absl::Status RunCompile(const CompileOptions& options) {
  if (NamesModel(options)) return RunCompileModel(options);
  for (const std::string& spec : options.specs) {
    if (absl::EndsWith(spec, ".onnx")) {
      return absl::InvalidArgumentError(absl::StrCat(
          spec, ": a model is compiled alone, without workload specs"));
    }
  }
  if (!options.shapes.empty()) {
    return absl::InvalidArgumentError(
        "--shape goes with a model (MODEL.onnx), not with workload specs");
  }
  // Cheap checks of the command line first, before any compilation. The
  // output's kind: a library for a CPU target, a host source, cubin or PTX
  // for a cuda target.
  const bool cuda = NamesCudaTarget(options.target);
  absl::StatusOr<LibraryKind> kind = LibraryKind::kObject;
  absl::StatusOr<CudaOutput> cuda_output = CudaOutput::kHostSource;
  if (cuda) {
    cuda_output =
        CudaOutputForPath(options.output, options.header,
                          !options.function.empty() || !options.prefix.empty());
    if (!cuda_output.ok()) return cuda_output.status();
  } else {
    kind = LibraryKindForPath(options.output);
    if (!kind.ok()) return kind.status();
  }
  if (absl::Status st = CheckOutputPaths(
          {{"--db", options.db_path}, {"--trace", options.trace_path}},
          {{"-o", options.output},
           {"--header", options.header},
           {"--manifest", options.manifest},
           {"--misses", options.misses}});
      !st.ok()) {
    return st;
  }
  absl::StatusOr<std::vector<std::pair<std::string, Workload>>> workloads =
      ResolveWorkloads(options);
  if (!workloads.ok()) return workloads.status();
  const bool single = workloads->size() == 1;
  if (cuda && !single) {
    return absl::InvalidArgumentError(
        "a cuda target compiles one workload per command (one host entry "
        "point per source); run lathe compile once per workload");
  }
  if (!options.trace_path.empty() && (!single || !options.db_path.empty())) {
    return absl::InvalidArgumentError(
        "--trace schedules one workload and does not go with --db (the "
        "database gives the "
        "schedules)");
  }
  if (!options.function.empty() && !single) {
    return absl::InvalidArgumentError(
        "--function names one kernel; with several workloads use --prefix");
  }
  if (absl::Status st = CheckDatabaseOnlyOptions(options); !st.ok()) return st;

  // Function names: one per workload, and one workload per name.
  std::vector<Entry> entries;
  std::map<std::string, size_t> by_key;
  std::map<std::string, size_t> by_function;
  for (size_t i = 0; i < workloads->size(); ++i) {
    const auto& [spec, workload] = (*workloads)[i];
    Entry entry;
    entry.spec = spec;
    entry.function = !options.function.empty()
                         ? options.function
                         : options.prefix + DefaultFunctionName(workload);
    if (!IsCIdentifier(entry.function)) {
      return absl::InvalidArgumentError(
          absl::StrCat(options.function.empty() ? "--prefix " : "--function ",
                       entry.function,
                       ": not a C identifier free to name a kernel (keywords, "
                       "main, _X..., __... and "
                       "lathe, lathe_... are taken)"));
    }
    if (auto [it, fresh] = by_key.emplace(workload.Key(), i); !fresh) {
      return absl::InvalidArgumentError(
          absl::StrCat("specs ", (*workloads)[it->second].first, " and ", spec,
                       " are the same workload (", workload.CanonicalForm(),
                       "): give it once"));
    }
    if (auto [it, fresh] = by_function.emplace(entry.function, i); !fresh) {
      return absl::InvalidArgumentError(
          absl::StrCat("specs ", (*workloads)[it->second].first, " and ", spec,
                       " both get function name ", entry.function));
    }
    entries.push_back(std::move(entry));
  }

  absl::StatusOr<Target> target = CompileTarget(options, cuda);
  if (!target.ok()) return target.status();
  absl::StatusOr<std::unique_ptr<db::Database>> opened = OpenDatabase(options);
  if (!opened.ok()) return opened.status();
  std::unique_ptr<db::Database> db = *std::move(opened);

  // Plans: a trace, or the database's best record, or the default schedule.
  std::vector<const Entry*> untuned;
  for (size_t i = 0; i < entries.size(); ++i) {
    Entry& entry = entries[i];
    const Workload& workload = (*workloads)[i].second;
    if (!options.trace_path.empty()) {
      absl::StatusOr<Trace> trace = LoadTraceFor(options.trace_path, workload);
      if (!trace.ok()) return trace.status();
      absl::StatusOr<KernelProgram> kernel =
          MakeKernelProgram(workload, &*trace, *target);
      if (!kernel.ok()) {
        return absl::Status(kernel.status().code(),
                            absl::StrCat("trace ", options.trace_path, ": ",
                                         kernel.status().message()));
      }
      api::KernelOrigin origin;
      origin.structural_hash = kernel->structural_hash;
      entry.plan =
          api::KernelPlan{workload, *target, *std::move(kernel), origin};
      entry.from_trace = true;
      continue;
    }
    absl::StatusOr<api::KernelPlan> plan =
        api::PlanKernel(db.get(), workload, *target,
                        options.compatible ? db::TargetMatching::kCompatible
                                           : db::TargetMatching::kExact);
    if (!plan.ok()) return plan.status();
    entry.plan = *std::move(plan);
    if (db != nullptr && !entry.plan->origin.tuned()) untuned.push_back(&entry);
  }

  if (absl::Status st =
          CheckUntuned(options, *target, untuned, entries.size(), "workloads");
      !st.ok()) {
    return st;
  }
  for (const Entry* e : untuned) {
    std::fprintf(
        stderr,
        "lathe: warning: %s: not tuned, using the default schedule (%s)\n",
        e->spec.c_str(), e->plan->origin.fallback_reason.c_str());
  }
  for (const Entry& e : entries) {
    if (e.plan && !e.plan->origin.skipped_reason.empty()) {
      std::fprintf(
          stderr, "lathe: warning: %s: using record %lld, a slower one (%s)\n",
          e.spec.c_str(), static_cast<long long>(e.plan->origin.record_id),
          e.plan->origin.skipped_reason.c_str());
    }
  }

  if (cuda) {
    const Entry& e = entries.front();
    absl::StatusOr<CudaKernelFiles> files = BuildCudaKernel(
        e.plan->program, *target, *cuda_output, e.function, options.header,
        absl::StrCat(e.plan->workload.CanonicalForm(), " for ",
                     target->ToString(), "; schedule: ", OriginText(e),
                     ", structural hash ", e.plan->program.structural_hash));
    if (!files.ok()) {
      return absl::Status(files.status().code(),
                          absl::StrCat(e.spec, ": ", files.status().message()));
    }
    return WriteOutputs(
        options, *target, entries,
        [&](const std::string& path) {
          return WriteFileBytes(path, files->output);
        },
        [&](const std::string&) { return files->header; });
  }
  if (single && db == nullptr) {
    // The single-kernel library and header.
    const Entry& e = entries.front();
    return WriteOutputs(
        options, *target, entries,
        [&](const std::string& path) {
          return WriteKernelLibrary(e.plan->program, *target, e.function, path);
        },
        [&](const std::string&) {
          return KernelHeader(e.plan->workload, e.plan->program, *target,
                              e.function, *kind);
        });
  }
  std::vector<LibraryKernel> kernels;
  for (const Entry& e : entries) {
    LibraryKernel k;
    k.workload = &e.plan->workload;
    k.kernel = &e.plan->program;
    k.function_name = e.function;
    k.origin = OriginText(e);
    kernels.push_back(std::move(k));
  }
  return WriteOutputs(
      options, *target, entries,
      [&](const std::string& path) {
        return WriteKernelLibrary(kernels, *target, path);
      },
      [&](const std::string& stem) {
        return KernelLibraryHeader(kernels, *target, *kind, stem);
      });
}

}  // namespace

void AddCompileCommand(CLI::App& app) {
  auto options = std::make_shared<CompileOptions>();
  CLI::App* command =
      app.add_subcommand("compile",
                         "compile workloads' kernels (from the tuning database "
                         "with --db), or a model (MODEL.onnx) into one C "
                         "function, to one object, static or shared library "
                         "and a C header; for a cuda target, one workload to "
                         "a C++ source with the cubin embedded and its "
                         "header, a cubin or PTX");
  command->add_option(
      "specs", options->specs,
      "workload specs, e.g. matmul:M=512,N=512,K=512 (see `lathe workloads`), "
      "or one model, MODEL.onnx: one library whose C function runs it");
  command->add_option("--shape", options->shapes,
                      "a model's input shape NAME=D0,D1,... for its symbolic "
                      "dimensions (repeatable)");
  command->add_option(
      "--expr", options->expr,
      "custom workload expression, e.g. \"C[i,j] += A[i,k] * B[k,j]\"");
  command->add_option(
      "--dims", options->dims,
      "extents of the --expr index variables, e.g. i=64,j=64,k=64");
  command->add_option(
      "--trace", options->trace_path,
      "a trace file (JSON or text form) to schedule one workload with; "
      "default: the default schedule, or the database's with --db");
  command->add_option(
      "--db", options->db_path,
      "the tuning database: each workload's best record (read only)");
  command->add_option(
      "--target", options->target,
      "target, e.g. host, \"llvm -mcpu=znver4 -num-threads=8\", "
      "\"cuda -arch=sm_90\" (default: host)");
  command
      ->add_option("-o,--output", options->output,
                   "output file: .o (kernels only), .a (kernels + runtime) or "
                   ".so (needs cc), for a model also .ll (its LLVM IR before "
                   "optimization); for a cuda target .cc, .cpp or .cxx (host "
                   "entry point, cubin embedded, with --header; build with "
                   "-lcuda), .cubin or .ptx")
      ->required();
  command->add_option("--header", options->header,
                      "where to write the C header (a cuda target's source "
                      "includes it by its file name)");
  command->add_option(
      "--function", options->function,
      "the kernel's C symbol, one workload only (default: from the workload, "
      "e.g. matmul_64x64x64); a model's entry (default: the file's stem); a "
      "cuda target's host entry point");
  command->add_option("--prefix", options->prefix,
                      "prefix of every default function name, e.g. tuned_");
  command->add_flag(
      "--require-tuned", options->require_tuned,
      "fail, listing them, when workloads have no usable record in --db");
  command->add_option("--misses", options->misses,
                      "write the untuned workloads there, one per line (lathe "
                      "tune --workloads-file)");
  command->add_flag(
      "--compatible", options->compatible,
      "let records of a compatible target answer (other thread count, fewer "
      "features)");
  command->add_option(
      "--manifest", options->manifest,
      "write a JSON manifest: each kernel's function and where its schedule "
      "came from");
  SetAction(command, [options] { return RunCompile(*options); });
}

}  // namespace lathe::cli
