// CUDA C -> PTX and cubin in process, through NVRTC loaded at run time
// (dlopen "libnvrtc.so.13", then /usr/local/cuda/lib64/libnvrtc.so.13): a
// machine without the CUDA toolkit's NVRTC gets a clear error, never a
// failure to load the program.
// Tests: tests/compiler/codegen/cuda/cuda_codegen_test.cc.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace lathe::cuda {

struct CompiledCuda {
  std::string ptx;
  std::string cubin;  // empty unless asked for
  std::string log;    // NVRTC's warnings, if any
};

// Ok when NVRTC loads; FailedPrecondition saying why not.
absl::Status CheckNvrtc();

// Compiles `source` for `arch` ("sm_90"): PTX for compute_XX, and the cubin
// for sm_XX when `cubin` is true. Errors: those of CheckNvrtc;
// InvalidArgument with NVRTC's log when the source does not compile (a bug
// of the generator, reported with the first lines of the log).
absl::StatusOr<CompiledCuda> CompileCuda(const std::string& source,
                                         const std::string& arch, bool cubin,
                                         const std::string& name = "kernel.cu");

}  // namespace lathe::cuda
