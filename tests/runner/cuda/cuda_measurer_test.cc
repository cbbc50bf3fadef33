// Tests of runner/cuda/cuda_measurer.h. Without a GPU (CI) only the
// argument checks run; the others skip with the reason, and run on the
// device machines (scripts/gpu-check.sh runs the measurer on every tuning
// candidate).
#include "runner/cuda/cuda_measurer.h"

#include <gtest/gtest.h>

#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/workload/spec.h"

namespace lathe::runner {
namespace {

TEST(CudaMeasurer, RefusesATargetThatIsNotCuda) {
  Target cpu;
  absl::StatusOr<std::unique_ptr<CudaMeasurer>> measurer =
      CudaMeasurer::Create(nullptr, cpu, {});
  EXPECT_EQ(measurer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(measurer.status().message().find("not a cuda target"),
            std::string::npos);
}

class CudaMeasurerOnDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<cuda::CudaDevice>> device =
        cuda::CudaDevice::Open(0);
    if (!device.ok()) GTEST_SKIP() << "no GPU: " << device.status();
    device_ = *std::move(device);
    absl::StatusOr<Target> target = cuda::ArchTarget(device_->info().arch);
    ASSERT_TRUE(target.ok()) << target.status();
    target_ = *target;
  }
  std::unique_ptr<cuda::CudaDevice> device_;
  Target target_;
};

TEST_F(CudaMeasurerOnDevice, MeasuresTheDefaultSchedule) {
  auto measurer = CudaMeasurer::Create(device_.get(), target_, {}).value();
  proto::MeasureRequest request;
  request.set_workload("matmul:M=128,N=128,K=64");
  request.set_target(target_.ToString());
  request.set_min_repeats(3);
  request.set_check_seed(1);
  proto::MeasureResult result = measurer->Measure(request);
  EXPECT_EQ(result.status(), proto::MEASURE_OK) << result.error();
  EXPECT_GE(result.times_s_size(), 3);
  EXPECT_FALSE(result.structural_hash().empty());
  // Another target's request is refused, naming both.
  request.set_target("cuda -arch=sm_80");
  result = measurer->Measure(request);
  if (target_.ToString() != request.target()) {
    EXPECT_EQ(result.status(), proto::MEASURE_BUILD_ERROR);
    EXPECT_NE(result.error().find("is not this runner's"), std::string::npos);
  }
}

}  // namespace
}  // namespace lathe::runner
