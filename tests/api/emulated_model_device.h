// Test support: a GPU model's device (api/model_device.h) emulated on the
// CPU. Device memory is host memory, and modules run through the CUDA
// emulation (tests/compiler/codegen/cuda/cuda_emulation.h). Stricter than
// a GPU: every copy and every kernel parameter must lie inside a live
// allocation (a GPU may read past a buffer into a neighbour unnoticed),
// and new allocations are filled with NaN, so that reading what no step
// wrote shows in the results.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/model_device.h"
#include "tests/compiler/codegen/cuda/cuda_emulation.h"

namespace lathe::api::testing {

class EmulatedModelDevice : public ModelDevice {
 public:
  explicit EmulatedModelDevice(std::string arch = "sm_90")
      : arch_(std::move(arch)) {}
  ~EmulatedModelDevice() override {
    for (auto& [address, bytes] : live_) {
      delete[] reinterpret_cast<float*>(address);
    }
  }

  std::string name() const override { return "emulated GPU"; }
  std::string arch() const override { return arch_; }
  absl::Status MakeCurrent() override { return absl::OkStatus(); }

  absl::StatusOr<Address> Alloc(int64_t bytes) override {
    if (bytes <= 0) return absl::InvalidArgumentError("alloc of no bytes");
    const int64_t floats = (bytes + 3) / 4;
    float* data = new float[floats];
    for (int64_t i = 0; i < floats; ++i) data[i] = __builtin_nanf("");
    Address address = reinterpret_cast<Address>(data);
    live_[address] = bytes;
    ++allocations;
    return address;
  }
  void Free(Address address) override {
    auto it = live_.find(address);
    if (it == live_.end()) {
      ++bad_frees;
      return;
    }
    delete[] reinterpret_cast<float*>(address);
    live_.erase(it);
  }
  absl::Status CopyToDevice(Address dst, const void* src,
                            int64_t bytes) override {
    if (absl::Status st = CheckRange(dst, bytes, "copy to the device");
        !st.ok())
      return st;
    std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
    ++copies_to_device;
    return absl::OkStatus();
  }
  absl::Status CopyToHost(void* dst, Address src, int64_t bytes) override {
    if (absl::Status st = CheckRange(src, bytes, "copy to the host"); !st.ok())
      return st;
    std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
    ++copies_to_host;
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<Module>> Load(
      const cuda::CudaModule& module, const std::string& cubin) override {
    if (cubin.empty()) return absl::InvalidArgumentError("no cubin");
    absl::StatusOr<std::unique_ptr<cuda::testing::EmulatedModule>> loaded =
        cuda::testing::EmulatedModule::Load(module);
    if (!loaded.ok()) return loaded.status();
    ++modules_loaded;
    return std::unique_ptr<Module>(
        new EmulatedModule(this, module, *std::move(loaded)));
  }
  absl::Status Synchronize() override { return absl::OkStatus(); }

  int live_allocations() const { return static_cast<int>(live_.size()); }

  // When >= 0: the launch with this number (0: the first) fails, as a
  // kernel's launch on a GPU may.
  int failing_launch = -1;

  int allocations = 0;
  int bad_frees = 0;
  int copies_to_device = 0;
  int copies_to_host = 0;
  int modules_loaded = 0;
  int launches = 0;

 private:
  class EmulatedModule : public Module {
   public:
    EmulatedModule(EmulatedModelDevice* device, cuda::CudaModule module,
                   std::unique_ptr<cuda::testing::EmulatedModule> loaded)
        : device_(device),
          module_(std::move(module)),
          loaded_(std::move(loaded)) {}
    absl::Status Launch(const std::vector<Address>& params) override {
      std::vector<float*> pointers(params.size(), nullptr);
      for (const cuda::DeviceBufferSpec& b : module_.buffers) {
        if (b.param_index < 0) continue;
        if (b.param_index >= static_cast<int>(params.size())) {
          return absl::InvalidArgumentError(
              absl::StrCat("no address for parameter ", b.name));
        }
        if (absl::Status st =
                device_->CheckRange(params[b.param_index], b.bytes,
                                    absl::StrCat("parameter ", b.name));
            !st.ok())
          return st;
        pointers[b.param_index] =
            reinterpret_cast<float*>(params[b.param_index]);
      }
      if (device_->launches++ == device_->failing_launch) {
        return absl::InternalError("emulated launch failure");
      }
      loaded_->Run(pointers);
      return absl::OkStatus();
    }

   private:
    EmulatedModelDevice* device_;
    cuda::CudaModule module_;
    std::unique_ptr<cuda::testing::EmulatedModule> loaded_;
  };

  // Ok when [address, address + bytes) lies in one live allocation.
  absl::Status CheckRange(Address address, int64_t bytes,
                          const std::string& what) const {
    auto it = live_.upper_bound(address);
    if (it != live_.begin()) {
      --it;
      if (address >= it->first &&
          address + static_cast<Address>(bytes) <=
              it->first + static_cast<Address>(it->second)) {
        return absl::OkStatus();
      }
    }
    return absl::OutOfRangeError(
        absl::StrCat(what, ": ", bytes, " bytes at ", address,
                     " are not inside one allocation"));
  }

  std::string arch_;
  std::map<Address, int64_t> live_;  // address -> bytes
};

}  // namespace lathe::api::testing
