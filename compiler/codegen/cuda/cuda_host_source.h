// A CUDA kernel for builds: a C header and a C++ source file with the cubin
// embedded and one host entry point that launches the module's kernels in
// order on device pointers (the CUDA counterpart of kernel_header.h's CPU
// entry points). The entry point uses the driver API (link with -lcuda):
//
//   int NAME(CUdeviceptr in0, ..., CUdeviceptr out0, CUstream stream);
//
// in the current context, on `stream`; buffers as the C ABI of CPU kernels
// lays them out (row-major, inputs then outputs), each 16-byte aligned
// (cuMemAlloc's are). It returns 0, or the CUresult of the first driver
// call that failed. The module is loaded on the first call (not
// thread-safe: make the first call from one thread); intermediates between
// kernels are allocated and freed within the call, which then waits for
// the stream.
// Tests: tests/compiler/codegen/cuda/cuda_codegen_test.cc.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "compiler/codegen/cuda/cuda_codegen.h"
#include "compiler/ir/program.h"

namespace lathe::cuda {

struct HostSource {
  std::string header;
  std::string source;  // includes the header
};

// `image`: the cubin (or PTX) of `module.source`; `lowered`: the program it
// came from (for the parameters' names and shapes); `name`: the entry
// point's C symbol; `header_file`: the header as the source includes it
// (`#include "header_file"`, e.g. "NAME.h"); `description`: one line for
// both files (the workload, target and schedule). Errors: InvalidArgument
// for a name that is not a C identifier, a header_file or description that
// would break out of its include or comment (a quote, a newline).
absl::StatusOr<HostSource> GenerateHostSource(const CudaModule& module,
                                              const Program& lowered,
                                              const std::string& image,
                                              const std::string& name,
                                              const std::string& header_file,
                                              const std::string& description);

}  // namespace lathe::cuda
