// Private to compiler/codegen/llvm: the LLVM-typed steps that the JIT, the
// object emitter and GenerateLLVMIR share. Nothing outside this folder
// includes it.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/ir/program.h"
#include "compiler/target/target.h"

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
}  // namespace llvm

namespace lathe {

// A target machine for the target on this process's triple, optimizing
// aggressively, position-independent (objects may go into shared libraries).
absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(
    const Target& target);

// Builds the module of codegen_llvm.h in ctx, with tm's triple and data layout.
absl::StatusOr<std::unique_ptr<llvm::Module>> BuildModule(
    const Program& lowered, const Target& target, const CodegenOptions& options,
    llvm::TargetMachine* tm, llvm::LLVMContext* ctx);

// An empty module named `name` with tm's triple and data layout, its
// context's diagnostics silenced (a tuner must stay quiet).
absl::StatusOr<std::unique_ptr<llvm::Module>> NewModule(const std::string& name,
                                                        llvm::TargetMachine* tm,
                                                        llvm::LLVMContext* ctx);

// Adds the kernel of `lowered` (and its outlined loops) to `module`, which
// may hold other kernels already (libraries of several kernels). Errors:
// those of BuildModule, and InvalidArgument when the kernel's symbol is
// taken in the module.
absl::Status AddKernelToModule(const Program& lowered, const Target& target,
                               const CodegenOptions& options,
                               llvm::Module* module);

// The new pass manager's O3 pipeline for tm (optimizer.cc), less the passes
// generated kernels do without (optimizer.cc says which and why).
void OptimizeModule(llvm::Module* module, llvm::TargetMachine* tm);

// Machine code for the module as an ELF relocatable object (object_emitter.cc).
absl::StatusOr<std::string> EmitObjectToMemory(llvm::Module* module,
                                               llvm::TargetMachine* tm);

}  // namespace lathe
