// Machine code emission through the legacy pass manager (LLVM 16's code
// generator still runs on it).
#include "compiler/codegen/llvm/object_emitter.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "compiler/codegen/llvm/llvm_module.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace lathe {

absl::StatusOr<std::string> EmitObjectToMemory(llvm::Module* module,
                                               llvm::TargetMachine* tm) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_ObjectFile)) {
    return absl::InternalError(
        absl::StrCat("codegen of ", module->getName().str(),
                     ": the target machine cannot emit object files"));
  }
  pm.run(*module);
  return std::string(buffer.data(), buffer.size());
}

absl::StatusOr<std::string> EmitObject(const Program& lowered,
                                       const Target& target,
                                       const CodegenOptions& options) {
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm,
                         CreateTargetMachine(target));
  llvm::LLVMContext ctx;
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module,
                         BuildModule(lowered, target, options, tm.get(), &ctx));
  OptimizeModule(module.get(), tm.get());
  return EmitObjectToMemory(module.get(), tm.get());
}

absl::StatusOr<std::string> EmitObject(const std::vector<ObjectKernel>& kernels,
                                       const Target& target,
                                       const std::string& module_name) {
  if (kernels.empty())
    return absl::InvalidArgumentError("object " + module_name + ": no kernels");
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm,
                         CreateTargetMachine(target));
  llvm::LLVMContext ctx;
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module,
                         NewModule(module_name, tm.get(), &ctx));
  for (const ObjectKernel& kernel : kernels) {
    LATHE_CHECK(kernel.lowered != nullptr,
                "EmitObject: a kernel without a program");
    LATHE_RETURN_IF_ERROR(AddKernelToModule(*kernel.lowered, target,
                                            kernel.options, module.get()));
  }
  OptimizeModule(module.get(), tm.get());
  return EmitObjectToMemory(module.get(), tm.get());
}

absl::Status EmitObjectFile(const Program& lowered, const Target& target,
                            const std::string& path,
                            const CodegenOptions& options) {
  LATHE_ASSIGN_OR_RETURN(std::string bytes,
                         EmitObject(lowered, target, options));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write object file ", path));
  return absl::OkStatus();
}

}  // namespace lathe
