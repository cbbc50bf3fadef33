// cuda_check_specs: the CUDA default of each workload in a file, checked
// without a GPU, for tests that gather workloads from elsewhere (a model's
// tasks: tests/models/cuda_model_tasks_test.sh).
//
//   cuda_check_specs SPECS_FILE
//
// SPECS_FILE holds one workload spec per line (blank lines skipped). Each
// spec's default GPU program for sm_90 (MakeCudaProgram) is compiled by
// NVRTC to PTX and assembled by ptxas, then run on the CPU
// (cuda_emulation.h) and checked against the workload's reference
// (CheckAgainstReference). Prints "FAIL N: SPEC: why" for each that fails
// and a summary line; exits 0 when all pass, 1 when one fails or the file
// cannot be read, 77 (skip) when NVRTC or ptxas is missing.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/codegen/cuda/cuda_program.h"
#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/codegen/cuda/nvrtc_compiler.h"
#include "compiler/measure/reference_check.h"
#include "compiler/workload/spec.h"
#include "tests/compiler/codegen/cuda/cuda_emulation.h"
#include "tests/compiler/codegen/cuda/ptxas.h"

namespace lathe::cuda {
namespace {

constexpr char kArch[] = "sm_90";

// Ok when `spec`'s default GPU program compiles, assembles and computes
// what its reference computes.
absl::Status CheckSpec(const std::string& spec, const Target& target) {
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  if (!workload.ok()) return workload.status();
  absl::StatusOr<CudaProgram> program =
      MakeCudaProgram(*workload, nullptr, target);
  if (!program.ok()) return program.status();
  absl::StatusOr<CompiledCuda> compiled =
      CompileCuda(program->module.source, kArch, /*cubin=*/false);
  if (!compiled.ok()) return compiled.status();
  if (std::string ptxas = testing::Assemble(compiled->ptx, kArch);
      !ptxas.empty()) {
    return absl::InternalError(absl::StrCat("ptxas: ", ptxas));
  }
  return CheckAgainstReference(*workload, [&](const std::vector<float*>& args) {
    return testing::RunEmulated(program->module, args);
  });
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: cuda_check_specs SPECS_FILE\n");
    return 1;
  }
  if (absl::Status nvrtc = CheckNvrtc(); !nvrtc.ok()) {
    std::printf("SKIP: %s\n", std::string(nvrtc.message()).c_str());
    return 77;
  }
  if (access(testing::kPtxas, X_OK) != 0) {
    std::printf("SKIP: %s not found\n", testing::kPtxas);
    return 77;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "cuda_check_specs: cannot read %s\n", argv[1]);
    return 1;
  }
  absl::StatusOr<Target> target = ArchTarget(kArch);
  if (!target.ok()) {
    std::fprintf(stderr, "cuda_check_specs: %s\n",
                 std::string(target.status().message()).c_str());
    return 1;
  }
  int checked = 0, failed = 0;
  std::string spec;
  while (std::getline(in, spec)) {
    if (spec.empty()) continue;
    ++checked;
    if (absl::Status s = CheckSpec(spec, *target); !s.ok()) {
      ++failed;
      std::printf("FAIL %d: %s: %s\n", checked, spec.c_str(),
                  std::string(s.message()).substr(0, 2000).c_str());
      std::fflush(stdout);
    }
  }
  std::printf("cuda_check_specs: %d workloads, %d passed, %d failed\n", checked,
              checked - failed, failed);
  return failed == 0 && checked > 0 ? 0 : 1;
}

}  // namespace
}  // namespace lathe::cuda

int main(int argc, char** argv) { return lathe::cuda::Main(argc, argv); }
