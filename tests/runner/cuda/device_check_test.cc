// Tests of runner/cuda/device_check.h. Here (no GPU): the comparison kernel
// through NVRTC and ptxas, and which checks go to the device. On a GPU: the
// default schedule passes, a changed reference element is caught and named
// (lathe-gpu-check runs the same probes on the device machines:
// tools/device_check_probe.h).
#include "runner/cuda/device_check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "compiler/codegen/cuda/cuda_program.h"
#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/codegen/cuda/nvrtc_compiler.h"
#include "compiler/workload/spec.h"
#include "tests/compiler/codegen/cuda/ptxas.h"

namespace lathe::runner {
namespace {

TEST(DeviceCheck, ComparisonKernelCompilesAndAssembles) {
  if (absl::Status s = cuda::CheckNvrtc(); !s.ok()) GTEST_SKIP() << s;
  for (const char* arch : {"sm_80", "sm_90"}) {
    absl::StatusOr<cuda::CompiledCuda> compiled =
        cuda::CompileCuda(CompareKernelSource(), arch, /*cubin=*/true);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    EXPECT_FALSE(compiled->cubin.empty());
    EXPECT_TRUE(absl::StrContains(compiled->ptx, kCompareKernelName));
    // The bound's product and sum each rounded (IsClose's), not fused.
    EXPECT_TRUE(absl::StrContains(compiled->ptx, "mul.rn.f64"));
    EXPECT_FALSE(absl::StrContains(compiled->ptx, "fma.rn.f64"));
    if (access(cuda::testing::kPtxas, X_OK) == 0) {
      EXPECT_EQ(cuda::testing::Assemble(compiled->ptx, arch), "");
    }
  }
}

TEST(DeviceCheck, OnlyLargeOperandsGoToTheDevice) {
  ReferenceCache::Entry small;
  small.inputs = {std::vector<float>(1024), std::vector<float>(1024)};
  small.outputs.push_back(TensorData(DType::Float32(), {32, 32}));
  EXPECT_FALSE(DeviceCheck::Wants(small));
  ReferenceCache::Entry large = small;
  large.inputs[0].resize(DeviceCheck::kMinBytes / 4);
  EXPECT_TRUE(DeviceCheck::Wants(large));
}

TEST(DeviceCheckOnDevice, PassesTheRightKernelAndNamesAWrongElement) {
  absl::StatusOr<std::unique_ptr<cuda::CudaDevice>> device =
      cuda::CudaDevice::Open(0);
  if (!device.ok()) GTEST_SKIP() << "no GPU: " << device.status();
  const Target target = cuda::ArchTarget((*device)->info().arch).value();
  const Workload workload =
      ParseWorkloadSpec("matmul:M=256,N=128,K=64").value();
  const cuda::CudaProgram program =
      cuda::MakeCudaProgram(workload, nullptr, target).value();
  const cuda::CompiledCuda compiled =
      cuda::CompileCuda(program.module.source, target.cpu, true).value();
  std::unique_ptr<cuda::LoadedModule> module =
      cuda::LoadedModule::Load(device->get(), program.module, compiled.cubin)
          .value();
  std::unique_ptr<DeviceCheck> check =
      DeviceCheck::Create(device->get(), (*device)->info().arch).value();
  ReferenceCache references;
  const ReferenceCache::Entry& entry = *references.Get(workload, 1).value();
  EXPECT_TRUE(check->Check("right", entry, workload, module.get()).ok());
  ReferenceCache::Entry wrong = entry;
  wrong.outputs[0].values[3001] += 1;
  absl::Status caught = check->Check("wrong", wrong, workload, module.get());
  EXPECT_EQ(caught.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(caught.message(), "element 3001")) << caught;
}

}  // namespace
}  // namespace lathe::runner
