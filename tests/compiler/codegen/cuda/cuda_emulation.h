// Runs generated CUDA C on the CPU, for tests on machines without a GPU: the
// source is compiled by the host C++ compiler with a prelude that maps
// blockIdx/threadIdx to thread-local variables, __shared__ to a static
// (blocks run one after another, so a block's threads share it), and
// __syncthreads to a barrier of the block's threads. A kernel without
// barriers runs its threads one after another on one thread; one with
// barriers runs each block's threads as OS threads. What this checks is
// the mapping of the lowered program to CUDA C (bound loops, guards,
// per-thread and shared arrays, barriers, launches); what it cannot is the
// hardware (the device run, tools/lathe_gpu_check.cc, does).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/codegen/cuda/cuda_codegen.h"

namespace lathe::cuda::testing {

// A module compiled for the CPU, to run as often as asked.
class EmulatedModule {
 public:
  // Errors: the compiler's output when the source does not compile for the
  // host.
  static absl::StatusOr<std::unique_ptr<EmulatedModule>> Load(
      const CudaModule& module);
  ~EmulatedModule();
  EmulatedModule(const EmulatedModule&) = delete;
  EmulatedModule& operator=(const EmulatedModule&) = delete;

  // Runs the kernels in order on `params` (host pointers in
  // Program::Params() order) and scratch buffers of its own, filled with
  // NaN so that a read before a write shows.
  void Run(const std::vector<float*>& params) const;

 private:
  EmulatedModule() = default;
  CudaModule module_;
  void* handle_ = nullptr;
  std::vector<void*> launchers_;  // per kernel
};

// Compiles `module` for the CPU and runs its kernels in order on `params`
// (host pointers in Program::Params() order); scratch buffers are
// allocated here. Errors: the compiler's output when the source does not
// compile for the host.
absl::Status RunEmulated(const CudaModule& module,
                         const std::vector<float*>& params);

}  // namespace lathe::cuda::testing
