// In-process compilation of lowered programs (ORC LLJIT), for measurement.
//
// Compile() turns a lowered program into a callable kernel for a target:
// LLVM IR (codegen_llvm.h), the O3 pipeline, machine code for the target's
// CPU and features, then linking into one process-wide LLJIT session whose
// symbol table defines the runtime's functions (compiler/runtime) by address
// and finds libc/libm in the process. Kernels stay loaded for the life of the
// process; a cache keyed by the program's structural hash, the target string
// and the options returns the same kernel for the same program. Compile may
// be called from several threads at once (a worker builds ahead on one;
// runner/build_ahead.h); each compilation has its own LLVM context.
// Tests: tests/compiler/codegen/jit_test.cc.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/ir/program.h"

namespace lathe {

// Where the time of one compilation went (lowering is the caller's).
struct CompileTimes {
  double codegen_ms = 0;       // lowered IR -> LLVM IR
  double optimize_ms = 0;      // LLVM O3
  double machine_code_ms = 0;  // LLVM IR -> object code
  double link_ms = 0;          // JIT linking and symbol lookup
  double total_ms() const {
    return codegen_ms + optimize_ms + machine_code_ms + link_ms;
  }
};

class CompiledKernel {
 public:
  // The kernel with the C ABI of docs/architecture.md: int NAME(const float*,
  // ..., float*).
  void* function() const { return function_; }
  // Calls the kernel with args in Program::Params() order (one pointer per
  // parameter, checked) and returns its status (0 on success). Sets the
  // runtime's thread count to the target's first.
  int Call(const std::vector<float*>& args) const;
  // As Call, with a Status naming the kernel and its return code.
  absl::Status Run(const std::vector<float*>& args) const;

  const std::string& name() const { return name_; }
  int num_args() const { return num_args_; }
  int num_threads() const { return num_threads_; }
  const CompileTimes& times() const { return times_; }
  // True when Compile found the kernel in the cache (times() are then those
  // of the original compilation).
  bool from_cache() const { return from_cache_; }

 private:
  friend class JitSession;
  using PackedFn = int (*)(void**);
  void* function_ = nullptr;
  PackedFn packed_ = nullptr;
  std::string name_;
  int num_args_ = 0;
  int num_threads_ = 1;
  CompileTimes times_;
  bool from_cache_ = false;
};

// Compiles (or finds in the cache) the kernel of a lowered program for a
// target. Errors: FailedPrecondition when the target cannot run here
// (CheckRunnableHere) or the program is not lowered/supported (see
// GenerateLLVMIR); Internal when LLVM fails to link.
absl::StatusOr<CompiledKernel> Compile(const Program& lowered,
                                       const Target& target,
                                       const CodegenOptions& options = {});

// Number of kernels compiled (not found in the cache) in this process.
int64_t NumJitCompilations();

}  // namespace lathe
