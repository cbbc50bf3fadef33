#include "cli/cuda_compile.h"

#include <filesystem>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "compiler/codegen/cuda/cuda_codegen.h"
#include "compiler/codegen/cuda/cuda_host_source.h"
#include "compiler/codegen/cuda/nvrtc_compiler.h"

namespace lathe::cli {

bool NamesCudaTarget(const std::string& target_text) {
  std::vector<std::string> words =
      absl::StrSplit(target_text, ' ', absl::SkipWhitespace());
  return !words.empty() && words.front() == "cuda";
}

absl::StatusOr<CudaOutput> CudaOutputForPath(const std::string& output,
                                             const std::string& header,
                                             bool names_entry) {
  for (const char* source : {".cc", ".cpp", ".cxx"}) {
    if (!absl::EndsWith(output, source)) continue;
    if (header.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "output ", output,
          ": the host source includes its header; give --header NAME.h"));
    }
    return CudaOutput::kHostSource;
  }
  CudaOutput kind;
  if (absl::EndsWith(output, ".cubin")) {
    kind = CudaOutput::kCubin;
  } else if (absl::EndsWith(output, ".ptx")) {
    kind = CudaOutput::kPtx;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("output ", output,
                     ": unknown extension for a cuda target (accepted: .cc, "
                     ".cpp, .cxx with --header, .cubin, .ptx)"));
  }
  if (!header.empty() || names_entry) {
    return absl::InvalidArgumentError(absl::StrCat(
        "output ", output,
        ": a cubin or PTX has no host entry point to declare or name "
        "(--header, --function and --prefix go with -o NAME.cc)"));
  }
  return kind;
}

absl::StatusOr<CudaKernelFiles> BuildCudaKernel(
    const KernelProgram& program, const Target& target, CudaOutput output,
    const std::string& function, const std::string& header_path,
    const std::string& description) {
  absl::StatusOr<cuda::CudaModule> module =
      cuda::GenerateCuda(program.lowered, target);
  if (!module.ok()) return module.status();
  absl::StatusOr<cuda::CompiledCuda> compiled =
      cuda::CompileCuda(module->source, target.cpu,
                        /*cubin=*/output != CudaOutput::kPtx);
  if (!compiled.ok()) return compiled.status();
  switch (output) {
    case CudaOutput::kCubin:
      return CudaKernelFiles{compiled->cubin, ""};
    case CudaOutput::kPtx:
      return CudaKernelFiles{compiled->ptx, ""};
    case CudaOutput::kHostSource:
      break;
  }
  absl::StatusOr<cuda::HostSource> host = cuda::GenerateHostSource(
      *module, program.lowered, compiled->cubin, function,
      std::filesystem::path(header_path).filename().string(), description);
  if (!host.ok()) return host.status();
  return CudaKernelFiles{host->source, host->header};
}

}  // namespace lathe::cli
