// cuBLAS's SGEMM as a peer for the GPU check: libcublas.so.13 opened with
// dlopen (no link-time dependency), the math mode left at CUBLAS_DEFAULT_MATH
// so that fp32 GEMM runs on CUDA cores (no TF32 tensor cores).
// Tests: tests/tools/CMakeLists.txt (gpu.lathe_gpu_check, on a device).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "compiler/codegen/cuda/cuda_driver.h"

namespace lathe::tools {

class CublasSgemm {
 public:
  // FailedPrecondition when cuBLAS cannot be loaded or initialized.
  static absl::StatusOr<std::unique_ptr<CublasSgemm>> Create();
  ~CublasSgemm();

  // Row-major C[M,N] = A[M,K] * B[K,N] on device pointers, on the default
  // stream (asynchronous).
  absl::Status Run(int m, int n, int k, cuda::DevicePtr a, cuda::DevicePtr b,
                   cuda::DevicePtr c);

 private:
  CublasSgemm() = default;
  void* handle_ = nullptr;
  int (*destroy_)(void*) = nullptr;
  int (*sgemm_)(void*, int, int, int, int, int, const float*, const float*, int,
                const float*, int, const float*, float*, int) = nullptr;
};

}  // namespace lathe::tools
