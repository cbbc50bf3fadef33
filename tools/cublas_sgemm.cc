#include "tools/cublas_sgemm.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"

namespace lathe::tools {

absl::StatusOr<std::unique_ptr<CublasSgemm>> CublasSgemm::Create() {
  void* lib = nullptr;
  for (const char* path :
       {"libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.13"}) {
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) break;
  }
  if (lib == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("no cuBLAS: ", dlerror()));
  }
  std::unique_ptr<CublasSgemm> out(new CublasSgemm());
  auto create =
      reinterpret_cast<int (*)(void**)>(dlsym(lib, "cublasCreate_v2"));
  auto set_math =
      reinterpret_cast<int (*)(void*, int)>(dlsym(lib, "cublasSetMathMode"));
  out->destroy_ =
      reinterpret_cast<int (*)(void*)>(dlsym(lib, "cublasDestroy_v2"));
  out->sgemm_ =
      reinterpret_cast<decltype(out->sgemm_)>(dlsym(lib, "cublasSgemm_v2"));
  if (!create || !set_math || !out->destroy_ || !out->sgemm_) {
    return absl::FailedPreconditionError("cuBLAS lacks cublasSgemm_v2");
  }
  if (int r = create(&out->handle_); r != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cublasCreate failed (", r, ")"));
  }
  constexpr int kCublasDefaultMath = 0;  // no TF32
  if (int r = set_math(out->handle_, kCublasDefaultMath); r != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cublasSetMathMode failed (", r, ")"));
  }
  return out;
}

CublasSgemm::~CublasSgemm() {
  if (handle_ != nullptr) destroy_(handle_);
}

absl::Status CublasSgemm::Run(int m, int n, int k, cuda::DevicePtr a,
                              cuda::DevicePtr b, cuda::DevicePtr c) {
  // Column-major cuBLAS computes Cᵀ = Bᵀ Aᵀ, which is row-major C = A B.
  const float alpha = 1, beta = 0;
  constexpr int kOpN = 0;
  int r = sgemm_(handle_, kOpN, kOpN, n, m, k, &alpha,
                 reinterpret_cast<const float*>(b), n,
                 reinterpret_cast<const float*>(a), k, &beta,
                 reinterpret_cast<float*>(c), n);
  if (r != 0) {
    return absl::InternalError(absl::StrCat("cublasSgemm failed (", r, ")"));
  }
  return absl::OkStatus();
}

}  // namespace lathe::tools
