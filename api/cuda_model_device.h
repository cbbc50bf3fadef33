// A GPU model's device (model_device.h) on a GPU: the CUDA driver, opened
// at run time (compiler/codegen/cuda/cuda_driver.h), so that a machine
// without a driver or a GPU gets a clear error from Open.
// Tests: on a device only (tools/lathe_gpu_check.cc, --model); the model
// code above it runs in CI on an emulation (tests/api/gpu_model_test.cc).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "api/model_device.h"
#include "compiler/codegen/cuda/cuda_driver.h"

namespace lathe::api {

class CudaModelDevice : public ModelDevice {
 public:
  // The GPU of that ordinal (0: the first of CUDA_VISIBLE_DEVICES). Errors:
  // the driver's ("no CUDA driver: ..."), no such device.
  static absl::StatusOr<std::unique_ptr<CudaModelDevice>> Open(int ordinal);

  std::string name() const override;
  std::string arch() const override;
  absl::Status MakeCurrent() override;
  absl::StatusOr<Address> Alloc(int64_t bytes) override;
  void Free(Address address) override;
  absl::Status CopyToDevice(Address dst, const void* src,
                            int64_t bytes) override;
  absl::Status CopyToHost(void* dst, Address src, int64_t bytes) override;
  absl::StatusOr<std::unique_ptr<Module>> Load(
      const cuda::CudaModule& module, const std::string& cubin) override;
  absl::Status Synchronize() override;

 private:
  explicit CudaModelDevice(std::unique_ptr<cuda::CudaDevice> device)
      : device_(std::move(device)) {}
  std::unique_ptr<cuda::CudaDevice> device_;
};

}  // namespace lathe::api
