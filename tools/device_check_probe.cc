// The device check's probes (device_check_probe.h).
#include "tools/device_check_probe.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/codegen/cuda/cuda_program.h"
#include "compiler/codegen/cuda/nvrtc_compiler.h"
#include "compiler/measure/reference_check.h"
#include "compiler/workload/spec.h"
#include "runner/cuda/device_check.h"

namespace lathe::tools {

bool ProbeDeviceCheck(cuda::CudaDevice* device, const Target& target) {
  const std::string spec = "matmul:M=512,N=256,K=128";
  auto fail = [&](const std::string& what, const absl::Status& status) {
    std::printf("FAIL device check %s: %s\n", what.c_str(),
                std::string(status.message()).c_str());
    std::fflush(stdout);
    return false;
  };
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  if (!workload.ok()) return fail(spec, workload.status());
  absl::StatusOr<cuda::CudaProgram> program =
      cuda::MakeCudaProgram(*workload, nullptr, target);
  if (!program.ok()) return fail(spec, program.status());
  absl::StatusOr<cuda::CompiledCuda> compiled =
      cuda::CompileCuda(program->module.source, target.cpu, /*cubin=*/true);
  if (!compiled.ok()) return fail(spec, compiled.status());
  absl::StatusOr<std::unique_ptr<cuda::LoadedModule>> loaded =
      cuda::LoadedModule::Load(device, program->module, compiled->cubin);
  if (!loaded.ok()) return fail(spec, loaded.status());
  absl::StatusOr<std::unique_ptr<runner::DeviceCheck>> check =
      runner::DeviceCheck::Create(device, device->info().arch);
  if (!check.ok()) return fail("kernel", check.status());
  ReferenceCache references;
  absl::StatusOr<const ReferenceCache::Entry*> entry =
      references.Get(*workload, /*seed=*/1);
  if (!entry.ok()) return fail(spec, entry.status());

  bool passed = true;
  // The right kernel against the true reference.
  absl::Status right =
      (*check)->Check("true", **entry, *workload, loaded->get());
  if (!right.ok()) {
    passed = fail(absl::StrCat(spec, " (the default schedule)"), right);
  } else {
    std::printf("PASS device check %s: the default schedule passes\n",
                spec.c_str());
  }
  // The same kernel against references it must not pass.
  const int64_t changed = 70001;
  struct Wrong {
    const char* what;
    double value;
  };
  for (const Wrong& wrong : {Wrong{"one element changed", 0},
                             Wrong{"a NaN in the reference",
                                   std::numeric_limits<double>::quiet_NaN()}}) {
    ReferenceCache::Entry bad = **entry;
    double& element = bad.outputs[0].values[changed];
    element = std::isnan(wrong.value) ? wrong.value : element + 1;
    absl::Status caught =
        (*check)->Check(wrong.what, bad, *workload, loaded->get());
    if (absl::IsFailedPrecondition(caught) &&
        absl::StrContains(caught.message(),
                          absl::StrCat("element ", changed))) {
      std::printf("PASS device check %s: %s is caught (%s)\n", spec.c_str(),
                  wrong.what, std::string(caught.message()).c_str());
    } else {
      passed = fail(absl::StrCat(spec, ", ", wrong.what),
                    caught.ok() ? absl::InternalError("it passed") : caught);
    }
  }
  std::fflush(stdout);
  return passed;
}

}  // namespace lathe::tools
