#include "api/cuda_model_device.h"

#include <utility>

namespace lathe::api {
namespace {

class CudaModule : public ModelDevice::Module {
 public:
  explicit CudaModule(std::unique_ptr<cuda::LoadedModule> loaded)
      : loaded_(std::move(loaded)) {}
  absl::Status Launch(
      const std::vector<ModelDevice::Address>& params) override {
    return loaded_->Launch(params);
  }

 private:
  std::unique_ptr<cuda::LoadedModule> loaded_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<CudaModelDevice>> CudaModelDevice::Open(
    int ordinal) {
  absl::StatusOr<std::unique_ptr<cuda::CudaDevice>> device =
      cuda::CudaDevice::Open(ordinal);
  if (!device.ok()) return device.status();
  return std::unique_ptr<CudaModelDevice>(
      new CudaModelDevice(*std::move(device)));
}

std::string CudaModelDevice::name() const { return device_->info().name; }
std::string CudaModelDevice::arch() const { return device_->info().arch; }

absl::Status CudaModelDevice::MakeCurrent() { return device_->MakeCurrent(); }

absl::StatusOr<ModelDevice::Address> CudaModelDevice::Alloc(int64_t bytes) {
  return device_->Alloc(bytes);
}

void CudaModelDevice::Free(Address address) { device_->Free(address); }

absl::Status CudaModelDevice::CopyToDevice(Address dst, const void* src,
                                           int64_t bytes) {
  return device_->CopyToDevice(dst, src, bytes);
}

absl::Status CudaModelDevice::CopyToHost(void* dst, Address src,
                                         int64_t bytes) {
  return device_->CopyToHost(dst, src, bytes);
}

absl::StatusOr<std::unique_ptr<ModelDevice::Module>> CudaModelDevice::Load(
    const cuda::CudaModule& module, const std::string& cubin) {
  absl::StatusOr<std::unique_ptr<cuda::LoadedModule>> loaded =
      cuda::LoadedModule::Load(device_.get(), module, cubin,
                               cuda::LoadedModule::ParamBuffers::kCallers);
  if (!loaded.ok()) return loaded.status();
  return std::unique_ptr<Module>(new CudaModule(*std::move(loaded)));
}

absl::Status CudaModelDevice::Synchronize() { return device_->Synchronize(); }

}  // namespace lathe::api
