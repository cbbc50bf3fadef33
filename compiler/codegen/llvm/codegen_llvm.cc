// Lowered Program -> LLVM IR (see codegen_llvm.h for the mapping): the
// module set-up and checks around KernelEmitter (kernel_emitter.h).
#include "compiler/codegen/llvm/codegen_llvm.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/llvm/kernel_emitter.h"
#include "compiler/codegen/llvm/llvm_module.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace lathe {

using codegen_internal::KernelEmitter;
using codegen_internal::SanitizeIdentifier;

std::string KernelFunctionName(const Program& program,
                               const CodegenOptions& options) {
  return SanitizeIdentifier(
      options.function_name.empty() ? program.name : options.function_name);
}

absl::StatusOr<std::unique_ptr<llvm::Module>> BuildModule(
    const Program& lowered, const Target& target, const CodegenOptions& options,
    llvm::TargetMachine* tm, llvm::LLVMContext* ctx) {
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module,
                         NewModule(SanitizeIdentifier(lowered.name), tm, ctx));
  LATHE_RETURN_IF_ERROR(
      AddKernelToModule(lowered, target, options, module.get()));
  return module;
}

absl::StatusOr<std::unique_ptr<llvm::Module>> NewModule(
    const std::string& name, llvm::TargetMachine* tm, llvm::LLVMContext* ctx) {
  // Remarks and warnings ("loop not vectorized") would go to stderr; a tuner
  // compiling thousands of kernels must stay quiet. Errors still surface as
  // failed passes.
  ctx->setDiagnosticHandlerCallBack([](const llvm::DiagnosticInfo&, void*) {},
                                    nullptr);
  auto module = std::make_unique<llvm::Module>(name, *ctx);
  module->setTargetTriple(tm->getTargetTriple().str());
  module->setDataLayout(tm->createDataLayout());
  return module;
}

absl::Status AddKernelToModule(const Program& lowered, const Target& target,
                               const CodegenOptions& options,
                               llvm::Module* module) {
  const std::string name = KernelFunctionName(lowered, options);
  // LLVM renames a new function whose name is taken instead of failing; a
  // library with two kernels of one name (or a kernel named like another's
  // outlined loop) would silently export the wrong symbol.
  if (module->getNamedValue(name) != nullptr ||
      (options.emit_packed_wrapper &&
       module->getNamedValue(name + "_packed") != nullptr)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "codegen of ", lowered.name, ": symbol ", name,
        " is already defined in module ", module->getName().str()));
  }
  KernelEmitter emitter(lowered, target, module);
  LATHE_RETURN_IF_ERROR(emitter.Emit(name, options.emit_packed_wrapper));
  if (llvm::Function* fn = module->getFunction(name);
      fn == nullptr || fn->getName() != name) {
    return absl::InvalidArgumentError(
        absl::StrCat("codegen of ", lowered.name, ": symbol ", name,
                     " clashes with a symbol of another kernel"));
  }
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (llvm::verifyModule(*module, &os)) {
    return absl::InternalError(
        absl::StrCat("codegen of ", lowered.name,
                     ": the generated LLVM IR is invalid: ", os.str()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> GenerateLLVMIR(const Program& lowered,
                                           const Target& target,
                                           const CodegenOptions& options,
                                           bool optimize) {
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm,
                         CreateTargetMachine(target));
  llvm::LLVMContext ctx;
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module,
                         BuildModule(lowered, target, options, tm.get(), &ctx));
  if (optimize) OptimizeModule(module.get(), tm.get());
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, nullptr);
  return os.str();
}

}  // namespace lathe
