// The CUDA driver API, loaded at run time: a machine without a driver (or
// without a GPU) gets a clear error from the first call, never a failure to
// load the program. Only what Lathe uses: device attributes, the primary
// context, modules from a cubin, device memory, launches, events.
//
// The driver is opened with dlopen("libcuda.so.1") once per process; every
// failure of a driver call is reported with the call's name and the driver's
// own error string.
// Tests: tests/compiler/codegen/cuda/cuda_driver_test.cc (the parts that
// need no device), tests/tools/CMakeLists.txt (gpu.lathe_gpu_check) on a
// device.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/codegen/cuda/cuda_codegen.h"
#include "compiler/target/target.h"

namespace lathe::cuda {

struct DeviceInfo {
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::string arch;  // "sm_90"
  GpuLimits limits;
  int multiprocessors = 0;
  int driver_version = 0;  // 13000 for CUDA 13.0
};

// Ok when the driver loads and initializes; FailedPrecondition saying why
// not ("no CUDA driver: libcuda.so.1: cannot open shared object file").
absl::Status CheckDriver();

// The device's description. Errors: those of CheckDriver; FailedPrecondition
// when there is no such device.
absl::StatusOr<DeviceInfo> QueryDevice(int ordinal);

using DevicePtr = uint64_t;

// A device with its primary context current on the thread that opened it
// (MakeCurrent makes it current on another). Not thread-safe: one thread at
// a time.
class CudaDevice {
 public:
  static absl::StatusOr<std::unique_ptr<CudaDevice>> Open(int ordinal);
  ~CudaDevice();
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  const DeviceInfo& info() const { return info_; }
  // Makes the device's context current on the calling thread.
  absl::Status MakeCurrent();

  absl::StatusOr<DevicePtr> Alloc(int64_t bytes);
  void Free(DevicePtr ptr);
  absl::Status CopyToDevice(DevicePtr dst, const void* src, int64_t bytes);
  absl::Status CopyToHost(void* dst, DevicePtr src, int64_t bytes);
  absl::Status CopyOnDevice(DevicePtr dst, DevicePtr src, int64_t bytes);
  absl::Status Fill(DevicePtr dst, uint8_t value, int64_t bytes);
  absl::Status Synchronize();

  // A module loaded from a cubin (or PTX); functions by name. Unloaded by
  // UnloadModule, or with the device.
  absl::StatusOr<void*> LoadModule(const std::string& image);
  // Waits for the device's work, then unloads `module` (one LoadModule
  // returned; others are ignored). A runner loads a module per candidate,
  // thousands a day: kept loaded, they would fill the device.
  void UnloadModule(void* module);
  absl::StatusOr<void*> Function(void* module, const std::string& name);
  // Launches on the default stream; `args` points at each argument's value.
  absl::Status Launch(void* function, const Dim3& grid, const Dim3& block,
                      int64_t shared_bytes, std::vector<void*> args);

  // Milliseconds the GPU spent between two points of the default stream:
  // StartTimer, work, StopTimer (which waits for the work).
  absl::Status StartTimer();
  absl::StatusOr<double> StopTimer();

 private:
  CudaDevice() = default;
  DeviceInfo info_;
  int ordinal_ = 0;
  void* context_ = nullptr;
  std::vector<void*> modules_;
  void* start_ = nullptr;
  void* stop_ = nullptr;
};

// A generated module on a device: buffers allocated, kernels loaded from
// the compiled image. Run() copies every parameter in (outputs included, so
// that what a previous run left cannot pass for a result), launches every
// kernel in order and copies the outputs out; Launch() only launches (for
// timing). A module whose caller holds the parameters (a model's kernels,
// reading and writing its arena on the device) is launched on them with
// Launch(params).
class LoadedModule {
 public:
  // Who allocates the parameters' buffers: the module (Run, Launch()) or
  // the caller (Launch(params)); scratch buffers are always the module's.
  enum class ParamBuffers { kOwned, kCallers };
  // `image`: the cubin (or PTX) of `module.source`.
  static absl::StatusOr<std::unique_ptr<LoadedModule>> Load(
      CudaDevice* device, const CudaModule& module, const std::string& image,
      ParamBuffers param_buffers = ParamBuffers::kOwned);
  ~LoadedModule();

  // params: host pointers in Program::Params() order, inputs then outputs;
  // the last params.size() - num_inputs are outputs, copied back.
  // FailedPrecondition for a module loaded with ParamBuffers::kCallers.
  absl::Status Run(const std::vector<float*>& params, int num_inputs);
  absl::Status Launch();
  // Launches every kernel in order, asynchronously, on `params` (device
  // addresses in Program::Params() order) and the module's scratch.
  // InvalidArgument when params are not one per parameter buffer.
  absl::Status Launch(const std::vector<DevicePtr>& params);
  // The device address of a parameter's buffer.
  DevicePtr ParamPointer(int param_index) const;
  // The module it was loaded from (its kernels and their launches).
  const CudaModule& module() const { return module_; }

 private:
  LoadedModule() = default;
  // Launches every kernel on `buffers` (one address per module buffer).
  absl::Status LaunchOn(std::vector<DevicePtr>& buffers);
  CudaDevice* device_ = nullptr;
  CudaModule module_;
  void* handle_ = nullptr;  // the loaded image, unloaded with this module
  std::vector<DevicePtr> buffers_;  // 0 for a parameter the caller holds
  int num_params_ = 0;
  bool callers_params_ = false;
  std::vector<void*> functions_;
};

}  // namespace lathe::cuda
