// Relocatable object files (.o) of lowered programs, for `lathe compile` and
// for users who link kernels into their own programs. The object defines the
// kernel with the C ABI of docs/architecture.md (see codegen_llvm.h) and
// refers to the runtime (compiler/runtime/lathe_runtime.h) only when the
// program has parallel loops or large buffers; libm's tanhf, erff and powf
// when it uses tanh, erf and pow.
// Several kernels may share one object (a library of kernels, one C symbol
// each); kernel_library.h builds static and shared libraries on this.
// Tests: tests/compiler/codegen/object_emitter_test.cc.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/ir/program.h"
#include "compiler/target/target.h"

namespace lathe {

// The object file's bytes (ELF, position-independent), optimized at O3.
// Errors: those of GenerateLLVMIR.
absl::StatusOr<std::string> EmitObject(const Program& lowered,
                                       const Target& target,
                                       const CodegenOptions& options = {});

// One kernel of a multi-kernel object.
struct ObjectKernel {
  const Program* lowered = nullptr;
  CodegenOptions options;  // its C symbol among them
};

// One object file defining every kernel, in the given order (the same
// kernels give the same bytes). Errors: those of GenerateLLVMIR, and
// InvalidArgument when two kernels want the same symbol.
absl::StatusOr<std::string> EmitObject(const std::vector<ObjectKernel>& kernels,
                                       const Target& target,
                                       const std::string& module_name);

// Writes EmitObject's bytes to path; InvalidArgument when it cannot be written.
absl::Status EmitObjectFile(const Program& lowered, const Target& target,
                            const std::string& path,
                            const CodegenOptions& options = {});

}  // namespace lathe
