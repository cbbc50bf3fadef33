// Tests of runner/cuda/device_target.h: which cuda targets a device
// measures as the target, from device descriptions (no GPU needed), and
// this machine's answer (no GPU in CI: the driver's error).
#include "runner/cuda/device_target.h"

#include <gtest/gtest.h>

#include "compiler/codegen/cuda/cuda_target.h"

namespace lathe::runner {
namespace {

cuda::DeviceInfo H100() {
  cuda::DeviceInfo device;
  device.name = "NVIDIA H100 80GB HBM3";
  device.arch = "sm_90";
  device.limits = {1024, 49152, 65536, 32};
  device.multiprocessors = 132;
  return device;
}

Target Parse(const std::string& text) {
  absl::StatusOr<Target> target = cuda::ParseCudaTarget(text);
  EXPECT_TRUE(target.ok()) << target.status();
  return target.value_or(Target{});
}

TEST(DeviceTarget, ATargetOfTheDevicesArchitectureAndLimitsIsMeasured) {
  EXPECT_TRUE(CheckDeviceMeasures(Parse("cuda -arch=sm_90"), H100()).ok());
  // Smaller limits than the device's: its kernels launch here.
  EXPECT_TRUE(CheckDeviceMeasures(
                  Parse("cuda -arch=sm_90 -max-threads-per-block=512"), H100())
                  .ok());
}

TEST(DeviceTarget, AnotherArchitectureIsRefusedNamingBoth) {
  const absl::Status st =
      CheckDeviceMeasures(Parse("cuda -arch=sm_80"), H100());
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("sm_80"), std::string::npos) << st;
  EXPECT_NE(st.message().find("NVIDIA H100 80GB HBM3 (sm_90)"),
            std::string::npos)
      << st;
}

TEST(DeviceTarget, LimitsAboveTheDevicesAreRefusedNamingTheLimit) {
  cuda::DeviceInfo small = H100();
  small.limits.max_shared_memory_per_block = 32768;
  const absl::Status st = CheckDeviceMeasures(Parse("cuda -arch=sm_90"), small);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(
      st.message().find("49152 shared memory per block, the device 32768"),
      std::string::npos)
      << st;
}

TEST(DeviceTarget, ACpuTargetIsNotACudaTarget) {
  EXPECT_EQ(CheckDeviceMeasures(Target{}, H100()).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DeviceTarget, ThisMachineWithoutAGpuSaysWhy) {
  if (cuda::CheckDriver().ok() && cuda::QueryDevice(0).ok())
    GTEST_SKIP() << "this machine has a GPU";
  const absl::Status st = CheckCudaMeasurableHere(Parse("cuda -arch=sm_90"));
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_NE(st.message().find("cannot be measured here"), std::string::npos)
      << st;
}

}  // namespace
}  // namespace lathe::runner
