// Where a GPU model's tensors live and its kernels run (gpu_model.h):
// device memory, copies to and from it, and the generated modules launched
// on addresses in it, all in one stream (each operation after the ones
// before it). CudaModelDevice (cuda_model_device.h) is a GPU through the
// CUDA driver; tests run models on an emulation of a GPU on the CPU
// (tests/api/emulated_model_device.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/codegen/cuda/cuda_codegen.h"

namespace lathe::api {

// Not thread-safe: a device serves one model's calls at a time (a model
// serializes its own runs; models sharing a device are their caller's to
// serialize).
class ModelDevice {
 public:
  // An address in device memory; 0 is no buffer.
  using Address = uint64_t;

  // A generated module, loaded: its kernels launched in order on the
  // caller's buffers, with scratch buffers of its own.
  class Module {
   public:
    virtual ~Module() = default;
    // `params`: one address per parameter, in Program::Params() order
    // (inputs, then the output). Queued after the work before it.
    virtual absl::Status Launch(const std::vector<Address>& params) = 0;
  };

  virtual ~ModelDevice() = default;
  virtual std::string name() const = 0;  // "NVIDIA H100 80GB HBM3"
  virtual std::string arch() const = 0;  // "sm_90": what its cubins are for
  // Makes the device usable on the calling thread (a model's calls may come
  // from several threads, one at a time).
  virtual absl::Status MakeCurrent() = 0;
  virtual absl::StatusOr<Address> Alloc(int64_t bytes) = 0;
  virtual void Free(Address address) = 0;
  virtual absl::Status CopyToDevice(Address dst, const void* src,
                                    int64_t bytes) = 0;
  // Waits for the work queued before it.
  virtual absl::Status CopyToHost(void* dst, Address src, int64_t bytes) = 0;
  // `cubin`: `module.source` compiled for arch().
  virtual absl::StatusOr<std::unique_ptr<Module>> Load(
      const cuda::CudaModule& module, const std::string& cubin) = 0;
  // Waits for the work queued so far; a kernel's fault surfaces here (or at
  // the next copy to the host).
  virtual absl::Status Synchronize() = 0;
};

}  // namespace lathe::api
