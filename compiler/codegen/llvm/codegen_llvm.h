// CPU code generation: a lowered Program (compiler/lower/lowered_form.h) to
// LLVM IR, behind a header free of LLVM types.
//
// The generated module has one external function with the C ABI of
// docs/architecture.md ("Tensor layouts and the C ABI of compiled kernels"),
// `int NAME(const float* in0, ..., float* out0)`: one pointer per
// parameter in Program::Params() order (row-major, densely packed; inputs
// noalias readonly, outputs noalias), returning 0 on success and non-zero
// when a heap allocation or a parallel task failed. How the IR maps:
// - index arithmetic is int64; float arithmetic carries the contract,
//   reassoc, nsz and afn flags (FMAs form; reductions may vectorize);
// - serial loops are loops; unrolled loops are emitted `extent` times (or,
//   when long, a loop with llvm.loop.unroll.full); vectorized loops whose
//   body is float32 stores at unit stride in the loop variable, over a
//   multiple of 4 or more lanes, are emitted as vector IR directly (chunks of
//   up to a vector register); other vectorized loops carry
//   llvm.loop.vectorize.enable and a width no wider than the target's vector
//   registers (the vectorizer adds the tail); parallel loops are outlined
//   into `int body(int64_t task, void* closure)` run by lathe_parallel_for of
//   compiler/runtime/lathe_runtime.h, except on one-thread targets where they
//   are serial loops;
// - Select, And and Or whose lazy side may load out of bounds (or divide)
//   become branches and phis, which the vectorizer turns into masked loads;
// - buffers allocated by the root or an allocation-scope block live in the
//   function's entry: on the stack (64-byte aligned) up to 64 KiB, else
//   lathe_alloc/lathe_free.
// Tests: tests/compiler/codegen/codegen_llvm_test.cc.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"
#include "compiler/target/target.h"

namespace lathe {

struct CodegenOptions {
  // The C symbol of the kernel; empty: the program's name made a C identifier.
  std::string function_name;
  // Also emit `int NAME_packed(void** args)`, which calls the kernel with
  // args[0..n) (the JIT calls kernels of any arity through it).
  bool emit_packed_wrapper = false;
};

// Buffers above this size are heap-allocated instead of on the stack.
inline constexpr int64_t kMaxStackBufferBytes = 64 * 1024;

// The C symbol the kernel gets under these options.
std::string KernelFunctionName(const Program& program,
                               const CodegenOptions& options);

// The module as LLVM assembly text, optimized at O3 for the target when
// `optimize`. Errors: FailedPrecondition naming the statement when the
// program is not in lowered form or uses what this code generator does not
// support (thread-bound loops, unknown functions, unsupported dtypes);
// InvalidArgument for a target LLVM does not know.
absl::StatusOr<std::string> GenerateLLVMIR(const Program& lowered,
                                           const Target& target,
                                           const CodegenOptions& options = {},
                                           bool optimize = true);

// How many times, in this process, the optimizer skipped one of the O3
// passes it leaves out for generated kernels (optimizer.cc: loop load
// elimination), once per function or loop the pass would have run on.
int64_t NumOptimizerPassesLeftOut();

// Sets one of LLVM's command-line options (process-wide, e.g.
// "dse-memoryssa-defs-per-block-limit") to `value`, unless this process has
// set it already (an application embedding Lathe and LLVM keeps its own):
// true when set, false when left as the process had it. NotFound when this
// LLVM has no such option; InvalidArgument when LLVM refuses the value.
// The O3 pipeline (below and Compile) sets Lathe's own this way, once.
absl::StatusOr<bool> SetLlvmOptionUnlessSet(const std::string& name,
                                            const std::string& value);

}  // namespace lathe
