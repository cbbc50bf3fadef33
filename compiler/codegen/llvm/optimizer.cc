// Target machines and the O3 pipeline (new pass manager) for generated
// modules. Kept apart from codegen_llvm.cc so that each heavy LLVM TU builds
// on its own core.
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/llvm/llvm_module.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

namespace lathe {

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(const Target& target) {
  if (target.kind != "llvm") {
    return absl::InvalidArgumentError(
        absl::StrCat("target \"", target.ToString(), "\": not a CPU (llvm) target"));
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
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (llvm_target == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("target \"", target.ToString(), "\": LLVM has no target for ", triple, ": ", error));
  }
  llvm::TargetOptions options;
  // Fuse a*b+c into FMAs wherever the IR's contract flags allow.
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  std::unique_ptr<llvm::TargetMachine> tm(llvm_target->createTargetMachine(
      triple, target.cpu, target.FeatureString(), options, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOpt::Aggressive));
  if (tm == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("target \"", target.ToString(), "\": LLVM cannot create a target machine"));
  }
  return tm;
}

void OptimizeModule(llvm::Module* module, llvm::TargetMachine* tm) {
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
  llvm::PassBuilder pb(tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(*module, mam);
}

}  // namespace lathe
