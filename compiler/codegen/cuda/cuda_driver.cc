#include "compiler/codegen/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace lathe::cuda {
namespace {

// The driver API's types and the few functions Lathe calls, declared here
// so that building needs no CUDA header (cuda.h has the same values).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUstream = void*;
using CUevent = void*;
constexpr int kAttrMaxThreadsPerBlock = 1;
constexpr int kAttrMaxSharedMemoryPerBlock = 8;
constexpr int kAttrWarpSize = 10;
constexpr int kAttrMaxRegistersPerBlock = 12;
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;

struct DriverApi {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void**,
                             void**);
  CUresult (*cuEventCreate)(CUevent*, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*cuGetErrorString)(CUresult, const char**);
};

// Loads the driver once; the status says why it could not.
const absl::StatusOr<const DriverApi*>& Api() {
  static const auto* const api = new absl::StatusOr<const DriverApi*>(
      []() -> absl::StatusOr<const DriverApi*> {
        void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (lib == nullptr) {
          return absl::FailedPreconditionError(
              absl::StrCat("no CUDA driver: ", dlerror()));
        }
        auto* api = new DriverApi();
        std::string missing;
        auto load = [&](auto& fn, std::initializer_list<const char*> names) {
          for (const char* name : names) {
            if (void* sym = dlsym(lib, name)) {
              fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
              return;
            }
          }
          missing = *names.begin();
        };
        load(api->cuInit, {"cuInit"});
        load(api->cuDriverGetVersion, {"cuDriverGetVersion"});
        load(api->cuDeviceGetCount, {"cuDeviceGetCount"});
        load(api->cuDeviceGet, {"cuDeviceGet"});
        load(api->cuDeviceGetName, {"cuDeviceGetName"});
        load(api->cuDeviceGetAttribute, {"cuDeviceGetAttribute"});
        load(api->cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"});
        load(api->cuDevicePrimaryCtxRelease,
             {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"});
        load(api->cuCtxSetCurrent, {"cuCtxSetCurrent"});
        load(api->cuCtxSynchronize, {"cuCtxSynchronize"});
        load(api->cuModuleLoadData, {"cuModuleLoadData"});
        load(api->cuModuleUnload, {"cuModuleUnload"});
        load(api->cuModuleGetFunction, {"cuModuleGetFunction"});
        load(api->cuMemAlloc, {"cuMemAlloc_v2"});
        load(api->cuMemFree, {"cuMemFree_v2"});
        load(api->cuMemcpyHtoD, {"cuMemcpyHtoD_v2"});
        load(api->cuMemcpyDtoH, {"cuMemcpyDtoH_v2"});
        load(api->cuMemcpyDtoD, {"cuMemcpyDtoD_v2"});
        load(api->cuMemsetD8, {"cuMemsetD8_v2"});
        load(api->cuLaunchKernel, {"cuLaunchKernel"});
        load(api->cuEventCreate, {"cuEventCreate"});
        load(api->cuEventDestroy, {"cuEventDestroy_v2", "cuEventDestroy"});
        load(api->cuEventRecord, {"cuEventRecord"});
        load(api->cuEventSynchronize, {"cuEventSynchronize"});
        load(api->cuEventElapsedTime,
             {"cuEventElapsedTime_v2", "cuEventElapsedTime"});
        load(api->cuGetErrorString, {"cuGetErrorString"});
        if (!missing.empty()) {
          return absl::FailedPreconditionError(absl::StrCat(
              "CUDA driver libcuda.so.1 lacks ", missing, " (too old?)"));
        }
        CUresult r = api->cuInit(0);
        if (r != 0) {
          const char* text = nullptr;
          api->cuGetErrorString(r, &text);
          return absl::FailedPreconditionError(absl::StrCat(
              "CUDA driver: cuInit failed: ", text ? text : "unknown error",
              " (", r, ")"));
        }
        return api;
      }());
  return *api;
}

absl::Status Check(CUresult r, const char* call) {
  if (r == 0) return absl::OkStatus();
  const char* text = nullptr;
  (*Api())->cuGetErrorString(r, &text);
  return absl::InternalError(
      absl::StrCat("cuda: ", call, " failed: ", text ? text : "unknown error",
                   " (", r, ")"));
}

#define LATHE_CU(call, ...) \
  LATHE_RETURN_IF_ERROR(Check((*Api())->call(__VA_ARGS__), #call))

}  // namespace

absl::Status CheckDriver() { return Api().status(); }

absl::StatusOr<DeviceInfo> QueryDevice(int ordinal) {
  LATHE_RETURN_IF_ERROR(CheckDriver());
  int count = 0;
  LATHE_CU(cuDeviceGetCount, &count);
  if (ordinal < 0 || ordinal >= count) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cuda: no GPU number ", ordinal, " (this machine has ", count, ")"));
  }
  CUdevice device = 0;
  LATHE_CU(cuDeviceGet, &device, ordinal);
  DeviceInfo info;
  char name[256] = {};
  LATHE_CU(cuDeviceGetName, name, sizeof name, device);
  info.name = name;
  int major = 0, minor = 0;
  LATHE_CU(cuDeviceGetAttribute, &major, kAttrComputeCapabilityMajor, device);
  LATHE_CU(cuDeviceGetAttribute, &minor, kAttrComputeCapabilityMinor, device);
  info.arch = absl::StrCat("sm_", major, minor);
  LATHE_CU(cuDeviceGetAttribute, &info.limits.max_threads_per_block,
           kAttrMaxThreadsPerBlock, device);
  LATHE_CU(cuDeviceGetAttribute, &info.limits.max_shared_memory_per_block,
           kAttrMaxSharedMemoryPerBlock, device);
  LATHE_CU(cuDeviceGetAttribute, &info.limits.registers_per_block,
           kAttrMaxRegistersPerBlock, device);
  LATHE_CU(cuDeviceGetAttribute, &info.limits.warp_size, kAttrWarpSize, device);
  LATHE_CU(cuDeviceGetAttribute, &info.multiprocessors,
           kAttrMultiprocessorCount, device);
  LATHE_CU(cuDriverGetVersion, &info.driver_version);
  return info;
}

absl::StatusOr<std::unique_ptr<CudaDevice>> CudaDevice::Open(int ordinal) {
  LATHE_ASSIGN_OR_RETURN(DeviceInfo info, QueryDevice(ordinal));
  std::unique_ptr<CudaDevice> device(new CudaDevice());
  device->info_ = info;
  device->ordinal_ = ordinal;
  CUdevice handle = 0;
  LATHE_CU(cuDeviceGet, &handle, ordinal);
  LATHE_CU(cuDevicePrimaryCtxRetain, &device->context_, handle);
  LATHE_CU(cuCtxSetCurrent, device->context_);
  LATHE_CU(cuEventCreate, &device->start_, 0);
  LATHE_CU(cuEventCreate, &device->stop_, 0);
  return device;
}

absl::Status CudaDevice::MakeCurrent() {
  LATHE_CU(cuCtxSetCurrent, context_);
  return absl::OkStatus();
}

CudaDevice::~CudaDevice() {
  const DriverApi* api = *Api();
  for (void* m : modules_) api->cuModuleUnload(m);
  if (start_) api->cuEventDestroy(start_);
  if (stop_) api->cuEventDestroy(stop_);
  if (context_) {
    CUdevice handle = 0;
    if (api->cuDeviceGet(&handle, ordinal_) == 0)
      api->cuDevicePrimaryCtxRelease(handle);
  }
}

absl::StatusOr<DevicePtr> CudaDevice::Alloc(int64_t bytes) {
  CUdeviceptr ptr = 0;
  LATHE_CU(cuMemAlloc, &ptr, static_cast<size_t>(std::max<int64_t>(bytes, 4)));
  return ptr;
}

void CudaDevice::Free(DevicePtr ptr) {
  if (ptr != 0) (*Api())->cuMemFree(ptr);
}

absl::Status CudaDevice::CopyToDevice(DevicePtr dst, const void* src,
                                      int64_t bytes) {
  LATHE_CU(cuMemcpyHtoD, dst, src, static_cast<size_t>(bytes));
  return absl::OkStatus();
}

absl::Status CudaDevice::CopyToHost(void* dst, DevicePtr src, int64_t bytes) {
  LATHE_CU(cuMemcpyDtoH, dst, src, static_cast<size_t>(bytes));
  return absl::OkStatus();
}

absl::Status CudaDevice::CopyOnDevice(DevicePtr dst, DevicePtr src,
                                      int64_t bytes) {
  LATHE_CU(cuMemcpyDtoD, dst, src, static_cast<size_t>(bytes));
  return absl::OkStatus();
}

absl::Status CudaDevice::Fill(DevicePtr dst, uint8_t value, int64_t bytes) {
  LATHE_CU(cuMemsetD8, dst, value, static_cast<size_t>(bytes));
  return absl::OkStatus();
}

absl::Status CudaDevice::Synchronize() {
  LATHE_CU(cuCtxSynchronize);
  return absl::OkStatus();
}

absl::StatusOr<void*> CudaDevice::LoadModule(const std::string& image) {
  CUmodule module = nullptr;
  LATHE_CU(cuModuleLoadData, &module, image.data());
  modules_.push_back(module);
  return module;
}

void CudaDevice::UnloadModule(void* module) {
  auto it = std::find(modules_.begin(), modules_.end(), module);
  if (it == modules_.end()) return;
  modules_.erase(it);
  const DriverApi* api = *Api();
  api->cuCtxSynchronize();  // a failed context fails here too: unload anyway
  api->cuModuleUnload(static_cast<CUmodule>(module));
}

absl::StatusOr<void*> CudaDevice::Function(void* module,
                                           const std::string& name) {
  CUfunction function = nullptr;
  LATHE_CU(cuModuleGetFunction, &function, module, name.c_str());
  return function;
}

absl::Status CudaDevice::Launch(void* function, const Dim3& grid,
                                const Dim3& block, int64_t shared_bytes,
                                std::vector<void*> args) {
  LATHE_CU(cuLaunchKernel, function, static_cast<unsigned>(grid.x),
           static_cast<unsigned>(grid.y), static_cast<unsigned>(grid.z),
           static_cast<unsigned>(block.x), static_cast<unsigned>(block.y),
           static_cast<unsigned>(block.z), static_cast<unsigned>(shared_bytes),
           nullptr, args.data(), nullptr);
  return absl::OkStatus();
}

absl::Status CudaDevice::StartTimer() {
  LATHE_CU(cuEventRecord, start_, nullptr);
  return absl::OkStatus();
}

absl::StatusOr<double> CudaDevice::StopTimer() {
  LATHE_CU(cuEventRecord, stop_, nullptr);
  LATHE_CU(cuEventSynchronize, stop_);
  float ms = 0;
  LATHE_CU(cuEventElapsedTime, &ms, start_, stop_);
  return static_cast<double>(ms);
}

absl::StatusOr<std::unique_ptr<LoadedModule>> LoadedModule::Load(
    CudaDevice* device, const CudaModule& module, const std::string& image,
    ParamBuffers param_buffers) {
  std::unique_ptr<LoadedModule> loaded(new LoadedModule());
  loaded->device_ = device;
  loaded->module_ = module;
  loaded->callers_params_ = param_buffers == ParamBuffers::kCallers;
  for (const DeviceBufferSpec& b : module.buffers) {
    if (b.param_index >= 0) ++loaded->num_params_;
    if (b.param_index >= 0 && loaded->callers_params_) {
      loaded->buffers_.push_back(0);
      continue;
    }
    LATHE_ASSIGN_OR_RETURN(DevicePtr ptr, device->Alloc(b.bytes));
    loaded->buffers_.push_back(ptr);
  }
  LATHE_ASSIGN_OR_RETURN(void* handle, device->LoadModule(image));
  loaded->handle_ = handle;
  for (const CudaKernel& k : module.kernels) {
    LATHE_ASSIGN_OR_RETURN(void* fn, device->Function(handle, k.name));
    loaded->functions_.push_back(fn);
  }
  return loaded;
}

LoadedModule::~LoadedModule() {
  if (handle_ != nullptr) device_->UnloadModule(handle_);
  for (DevicePtr p : buffers_) {
    if (p != 0) device_->Free(p);
  }
}

DevicePtr LoadedModule::ParamPointer(int param_index) const {
  for (size_t i = 0; i < module_.buffers.size(); ++i) {
    if (module_.buffers[i].param_index == param_index) return buffers_[i];
  }
  return 0;
}

absl::Status LoadedModule::Launch() {
  if (callers_params_) {
    return absl::FailedPreconditionError(
        "the module's parameters are its caller's: launch it on them");
  }
  return LaunchOn(buffers_);
}

absl::Status LoadedModule::Launch(const std::vector<DevicePtr>& params) {
  if (static_cast<int>(params.size()) != num_params_) {
    return absl::InvalidArgumentError(absl::StrCat("the module takes ",
                                                   num_params_, " parameters, ",
                                                   params.size(), " given"));
  }
  std::vector<DevicePtr> buffers = buffers_;
  for (size_t i = 0; i < module_.buffers.size(); ++i) {
    int p = module_.buffers[i].param_index;
    if (p >= 0) buffers[i] = params[p];
  }
  return LaunchOn(buffers);
}

absl::Status LoadedModule::LaunchOn(std::vector<DevicePtr>& buffers) {
  for (size_t k = 0; k < module_.kernels.size(); ++k) {
    const CudaKernel& kernel = module_.kernels[k];
    std::vector<void*> args;
    for (int b : kernel.buffer_args) args.push_back(&buffers[b]);
    LATHE_RETURN_IF_ERROR(device_->Launch(functions_[k], kernel.grid,
                                          kernel.block, 0, std::move(args)));
  }
  return absl::OkStatus();
}

absl::Status LoadedModule::Run(const std::vector<float*>& params,
                               int num_inputs) {
  if (callers_params_) {
    return absl::FailedPreconditionError(
        "the module's parameters are its caller's: launch it on them");
  }
  // Outputs too: a kernel that skips an element must not pass on what a
  // previous run left in device memory (the caller poisons them).
  for (size_t i = 0; i < module_.buffers.size(); ++i) {
    const DeviceBufferSpec& b = module_.buffers[i];
    if (b.param_index >= 0) {
      LATHE_RETURN_IF_ERROR(
          device_->CopyToDevice(buffers_[i], params[b.param_index], b.bytes));
    }
  }
  LATHE_RETURN_IF_ERROR(Launch());
  LATHE_RETURN_IF_ERROR(device_->Synchronize());
  for (size_t i = 0; i < module_.buffers.size(); ++i) {
    const DeviceBufferSpec& b = module_.buffers[i];
    if (b.param_index >= num_inputs) {
      LATHE_RETURN_IF_ERROR(
          device_->CopyToHost(params[b.param_index], buffers_[i], b.bytes));
    }
  }
  return absl::OkStatus();
}

}  // namespace lathe::cuda
