// The driver loaded at run time: on a machine without one, every entry
// point says so instead of the program failing to load.
#include "compiler/codegen/cuda/cuda_driver.h"

#include <gtest/gtest.h>

namespace lathe::cuda {
namespace {

TEST(CudaDriver, WithoutADriverEveryEntryPointSaysSo) {
  absl::Status driver = CheckDriver();
  if (driver.ok()) GTEST_SKIP() << "this machine has a CUDA driver";
  EXPECT_EQ(driver.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(driver.message().find("no CUDA driver"), std::string::npos)
      << driver;
  EXPECT_EQ(QueryDevice(0).status(), driver);
  EXPECT_EQ(CudaDevice::Open(0).status(), driver);
}

}  // namespace
}  // namespace lathe::cuda
