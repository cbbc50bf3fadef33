// The object of a model library: every kernel of the model (internal
// symbols, each compiled once) and the entry function of model_entry.h,
// generated as LLVM IR with IRBuilder in the same module, so that building
// a model library needs no C compiler (a .so still needs one to link, as
// for kernels: kernel_library.h). The constants are read-only globals of
// the module (.rodata), 64-byte aligned. The kernels are `noinline` (each is
// the program that was measured) and internal, so the object exports the
// entry alone and two model libraries in one program do not clash.
// The same inputs give the same bytes. ModelModuleIr is the same module as
// text, before LLVM's optimizer: what `lathe compile MODEL.onnx -o X.ll`
// writes and the golden tests check.
// Tests: tests/compiler/codegen/model_entry_emitter_test.cc,
// tests/lit/graph/model_entry_ir.test.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/codegen/llvm/object_emitter.h"
#include "compiler/codegen/model_entry.h"
#include "compiler/target/target.h"

namespace lathe {

// The object defining entry.function_name. kernels[i].options.function_name
// must be distinct C identifiers other than the entry's. Errors:
// InvalidArgument naming what is wrong for an entry that refers to a kernel,
// a parameter or a constant that does not exist, an arena offset outside
// arena_bytes, a call whose argument count is not its kernel's; those of
// EmitObject.
absl::StatusOr<std::string> EmitModelObject(
    const std::vector<ObjectKernel>& kernels, const ModelEntry& entry,
    const Target& target);

// The module of EmitModelObject as LLVM IR text, verified, not optimized.
// Errors: those of EmitModelObject.
absl::StatusOr<std::string> ModelModuleIr(
    const std::vector<ObjectKernel>& kernels, const ModelEntry& entry,
    const Target& target);

}  // namespace lathe
