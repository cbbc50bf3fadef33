// tools/model_check.h on an emulated GPU: the graphs the GPU check runs
// on a device load, run and match the host here, so that a lent device's
// minutes test the device, not the check.
#include "tools/model_check.h"

#include <gtest/gtest.h>

#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/codegen/cuda/nvrtc_compiler.h"
#include "tests/api/emulated_model_device.h"

namespace lathe::tools {
namespace {

TEST(CheckModels, EveryModelPassesOnAnEmulatedGpu) {
  if (absl::Status nvrtc = cuda::CheckNvrtc(); !nvrtc.ok()) {
    GTEST_SKIP() << nvrtc;
  }
  auto device = std::make_shared<api::testing::EmulatedModelDevice>("sm_90");
  EXPECT_TRUE(CheckModels(cuda::ArchTarget("sm_90").value(), device,
                          /*timed_runs=*/1));
  EXPECT_GE(device->modules_loaded, 5);
}

TEST(CheckModels, AFailureIsReported) {
  if (absl::Status nvrtc = cuda::CheckNvrtc(); !nvrtc.ok()) {
    GTEST_SKIP() << nvrtc;
  }
  // The models for sm_80 on an sm_90 device: refused at load, each a FAIL.
  auto device = std::make_shared<api::testing::EmulatedModelDevice>("sm_90");
  EXPECT_FALSE(CheckModels(cuda::ArchTarget("sm_80").value(), device,
                           /*timed_runs=*/1));
}

}  // namespace
}  // namespace lathe::tools
