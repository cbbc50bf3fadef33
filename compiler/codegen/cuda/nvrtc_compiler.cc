#include "compiler/codegen/cuda/nvrtc_compiler.h"

#include <dlfcn.h>

#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace lathe::cuda {
namespace {

// NVRTC's functions, declared here so that building needs no CUDA header.
using nvrtcResult = int;
using nvrtcProgram = void*;

struct NvrtcApi {
  const char* (*nvrtcGetErrorString)(nvrtcResult);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*,
                                    int, const char* const*,
                                    const char* const*);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram*);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char*);
};

const absl::StatusOr<const NvrtcApi*>& Api() {
  static const auto* const api = new absl::StatusOr<const NvrtcApi*>(
      []() -> absl::StatusOr<const NvrtcApi*> {
        void* lib = nullptr;
        std::string errors;
        for (const char* path :
             {"libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.13"}) {
          lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
          if (lib != nullptr) break;
          absl::StrAppend(&errors, errors.empty() ? "" : "; ", dlerror());
        }
        if (lib == nullptr) {
          return absl::FailedPreconditionError(
              absl::StrCat("no NVRTC (CUDA 13 toolkit): ", errors));
        }
        auto* api = new NvrtcApi();
        std::string missing;
        auto load = [&](auto& fn, const char* name) {
          void* sym = dlsym(lib, name);
          if (sym == nullptr) missing = name;
          fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
        };
        load(api->nvrtcGetErrorString, "nvrtcGetErrorString");
        load(api->nvrtcCreateProgram, "nvrtcCreateProgram");
        load(api->nvrtcDestroyProgram, "nvrtcDestroyProgram");
        load(api->nvrtcCompileProgram, "nvrtcCompileProgram");
        load(api->nvrtcGetPTXSize, "nvrtcGetPTXSize");
        load(api->nvrtcGetPTX, "nvrtcGetPTX");
        load(api->nvrtcGetCUBINSize, "nvrtcGetCUBINSize");
        load(api->nvrtcGetCUBIN, "nvrtcGetCUBIN");
        load(api->nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize");
        load(api->nvrtcGetProgramLog, "nvrtcGetProgramLog");
        if (!missing.empty()) {
          return absl::FailedPreconditionError(
              absl::StrCat("NVRTC lacks ", missing));
        }
        return api;
      }());
  return *api;
}

}  // namespace

absl::Status CheckNvrtc() { return Api().status(); }

absl::StatusOr<CompiledCuda> CompileCuda(const std::string& source,
                                         const std::string& arch, bool cubin,
                                         const std::string& name) {
  LATHE_ASSIGN_OR_RETURN(const NvrtcApi* api, Api());
  if (arch.rfind("sm_", 0) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("nvrtc: architecture \"", arch, "\" is not sm_XX"));
  }
  auto check = [&](nvrtcResult r, const char* call) -> absl::Status {
    if (r == 0) return absl::OkStatus();
    return absl::InternalError(absl::StrCat(
        "nvrtc: ", call, " failed: ", api->nvrtcGetErrorString(r)));
  };
  nvrtcProgram program = nullptr;
  LATHE_RETURN_IF_ERROR(
      check(api->nvrtcCreateProgram(&program, source.c_str(), name.c_str(), 0,
                                    nullptr, nullptr),
            "nvrtcCreateProgram"));
  struct Destroy {
    const NvrtcApi* api;
    nvrtcProgram* program;
    ~Destroy() { api->nvrtcDestroyProgram(program); }
  } destroy{api, &program};
  // Without a cubin, PTX for the virtual architecture (any later GPU can JIT
  // it); with one, the real architecture (both come out of one compile).
  const std::string arch_option = absl::StrCat(
      "--gpu-architecture=", cubin ? arch : "compute_" + arch.substr(3));
  const std::vector<const char*> options = {arch_option.c_str(), "-std=c++17",
                                            "-default-device"};
  const nvrtcResult compiled = api->nvrtcCompileProgram(
      program, static_cast<int>(options.size()), options.data());
  CompiledCuda out;
  size_t log_size = 0;
  LATHE_RETURN_IF_ERROR(check(api->nvrtcGetProgramLogSize(program, &log_size),
                              "nvrtcGetProgramLogSize"));
  if (log_size > 1) {
    out.log.resize(log_size);
    LATHE_RETURN_IF_ERROR(
        check(api->nvrtcGetProgramLog(program, out.log.data()),
              "nvrtcGetProgramLog"));
    out.log.resize(log_size - 1);
  }
  if (compiled != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("nvrtc: ", name, " does not compile for ", arch, ": ",
                     out.log.substr(0, 2000)));
  }
  size_t size = 0;
  LATHE_RETURN_IF_ERROR(
      check(api->nvrtcGetPTXSize(program, &size), "nvrtcGetPTXSize"));
  out.ptx.resize(size);
  LATHE_RETURN_IF_ERROR(
      check(api->nvrtcGetPTX(program, out.ptx.data()), "nvrtcGetPTX"));
  if (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
  if (cubin) {
    LATHE_RETURN_IF_ERROR(
        check(api->nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize"));
    out.cubin.resize(size);
    LATHE_RETURN_IF_ERROR(
        check(api->nvrtcGetCUBIN(program, out.cubin.data()), "nvrtcGetCUBIN"));
  }
  return out;
}

}  // namespace lathe::cuda
