// `lathe compile SPEC --target 'cuda -arch=sm_XX'`: one workload's kernel for
// builds on an NVIDIA GPU. compile_command.cc plans it as it plans a CPU
// kernel (a --trace, the database's best record for the cuda target, else
// the default GPU schedule: api/kernel_plan.h) and writes it as it writes a
// CPU library (--require-tuned, --misses, --manifest, staged outputs); the
// pieces here are the CUDA ones: which output -o asks for, and its bytes,
// the program's CUDA C (cuda_codegen.h) compiled in process by NVRTC for the
// target's architecture (no device needed):
//
//   -o NAME.cc (.cpp, .cxx) --header NAME.h: C++ source with the cubin
//       embedded and one host entry point that launches the kernels on
//       device pointers (cuda_host_source.h; build it with any C++ compiler
//       against cuda.h and link -lcuda). The source includes the header by
//       its file name, so the header's folder must be on the include path.
//   -o NAME.cubin: the cubin alone, for sm_XX (cuModuleLoad).
//   -o NAME.ptx: the PTX, for compute_XX (the driver compiles it for the
//       GPU it loads on, newer architectures included).
// Tests: tests/cli/compile_cuda_test.sh.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "compiler/codegen/kernel_program.h"
#include "compiler/target/target.h"

namespace lathe::cli {

// True when a --target text names the CUDA back end (its first word is
// "cuda"), before it is parsed: the output checks come first.
bool NamesCudaTarget(const std::string& target_text);

enum class CudaOutput {
  kHostSource,  // .cc: host entry point, cubin embedded; with a header
  kCubin,
  kPtx,
};

// The output -o asks for, by its extension, checked against the options
// that go with it: the host source needs --header (it includes it); a
// cubin or PTX has no entry point to declare or name, so takes no --header
// and, when `names_entry` (--function or --prefix was given), is refused.
// InvalidArgument saying what to give instead.
absl::StatusOr<CudaOutput> CudaOutputForPath(const std::string& output,
                                             const std::string& header,
                                             bool names_entry);

// What is written: the output's bytes and, for kHostSource, the header's.
struct CudaKernelFiles {
  std::string output;
  std::string header;
};

// `program` (scheduled and lowered for the cuda `target`) as CUDA C,
// compiled by NVRTC for target.cpu, in the form `output`; for kHostSource
// the entry point is `function` and the source includes `header_path`'s
// file name. `description` is one line for both files (workload, target,
// schedule). The same inputs give the same bytes. Errors: code generation's
// (a schedule over the target's limits), NVRTC's (FailedPrecondition
// without the toolkit's NVRTC) and the host source's.
absl::StatusOr<CudaKernelFiles> BuildCudaKernel(const KernelProgram& program,
                                                const Target& target,
                                                CudaOutput output,
                                                const std::string& function,
                                                const std::string& header_path,
                                                const std::string& description);

}  // namespace lathe::cli
