// Target machines and the O3 pipeline (new pass manager) for generated
// modules. Kept apart from codegen_llvm.cc so that each heavy LLVM TU builds
// on its own core.
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/codegen/llvm/llvm_module.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/IR/PassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

namespace lathe {

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(
    const Target& target) {
  if (target.kind != "llvm") {
    return absl::InvalidArgumentError(absl::StrCat(
        "target \"", target.ToString(), "\": not a CPU (llvm) target"));
  }
  static const bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    return true;
  }();
  (void)initialized;
  std::string triple = llvm::sys::getProcessTriple();
  std::string error;
  const llvm::Target* llvm_target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (llvm_target == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("target \"", target.ToString(),
                     "\": LLVM has no target for ", triple, ": ", error));
  }
  llvm::TargetOptions options;
  // Fuse a*b+c into FMAs wherever the IR's contract flags allow.
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  std::unique_ptr<llvm::TargetMachine> tm(llvm_target->createTargetMachine(
      triple, target.cpu, target.FeatureString(), options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOpt::Aggressive));
  if (tm == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("target \"", target.ToString(),
                     "\": LLVM cannot create a target machine"));
  }
  return tm;
}

absl::StatusOr<bool> SetLlvmOptionUnlessSet(const std::string& name,
                                            const std::string& value) {
  llvm::StringMap<llvm::cl::Option*>& options =
      llvm::cl::getRegisteredOptions();
  auto it = options.find(name);
  if (it == options.end()) {
    return absl::NotFoundError(
        absl::StrCat("LLVM has no option \"", name, "\""));
  }
  llvm::cl::Option* option = it->second;
  if (option->getNumOccurrences() > 0) return false;
  // True on a value the option cannot parse (LLVM also says so on stderr).
  if (option->addOccurrence(/*pos=*/0, name, value)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "LLVM option \"", name, "\" refuses the value \"", value, "\""));
  }
  return true;
}

namespace {

// LLVM's defaults that do not suit generated kernels, set once per process
// before the first optimization (unless the process set them itself).
//
// Dead-store elimination considers every store of a block as a candidate
// against the others, up to 5,000 per block: quadratic in the stores of a
// block. A kernel's unrolled loops put hundreds of stores in one block (the
// write-back of a conv's accumulator tile, 32 x 14 unrolled: 448), which
// made DSE a large share of the O3 time of the conv candidates that tuning
// measures most, and it removed nothing: with the limit at 100 the optimized
// module is the same, byte for byte, on the kernels tried (bench/README.md,
// "Why the code is as it is").
void SetOptionsForGeneratedCode() {
  static const bool done = [] {
    (void)SetLlvmOptionUnlessSet("dse-memoryssa-defs-per-block-limit", "100");
    return true;
  }();
  (void)done;
}

// Passes of LLVM's O3 pipeline that generated kernels do without.
//
// Loop load elimination forwards a value stored in one iteration to a load
// of the next; in Lathe's kernels GVN's load PRE, earlier in the pipeline,
// has done that already. Its loop-access analysis is quadratic in a loop's
// memory accesses, and the conv candidates that unroll a tile's loads and
// stores into a loop of thousands spent seconds in it alone, many times a
// whole compile. Left out, the optimized module is the same, byte for byte,
// on the tuned, hand-written and default kernels tried (bench/README.md,
// "Why the code is as it is").
bool IsLeftOut(llvm::StringRef pass) {
  return pass == "LoopLoadEliminationPass";
}

std::atomic<int64_t> g_passes_left_out{0};

}  // namespace

int64_t NumOptimizerPassesLeftOut() { return g_passes_left_out.load(); }

void OptimizeModule(llvm::Module* module, llvm::TargetMachine* tm) {
  SetOptionsForGeneratedCode();
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  // The schedule decides what runs as vectors: loops it vectorized carry
  // llvm.loop.vectorize.enable (or are already vector IR), and only those are
  // vectorized. LLVM 16's loop vectorizer left to itself also miscompiled a
  // fully unrolled max-update nest (max_pool2d after rfactor; reproducer in
  // tests/compiler/codegen/data/max_pool_rfactor_trace.json).
  tuning.LoopVectorization = false;
  tuning.SLPVectorization = true;
  tuning.LoopUnrolling = true;
  llvm::PassInstrumentationCallbacks instrumentation;
  instrumentation.registerShouldRunOptionalPassCallback(
      [](llvm::StringRef pass, llvm::Any) {
        if (!IsLeftOut(pass)) return true;
        ++g_passes_left_out;
        return false;
      });
  llvm::PassBuilder pb(tm, tuning, std::nullopt, &instrumentation);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(*module, mam);
}

}  // namespace lathe
