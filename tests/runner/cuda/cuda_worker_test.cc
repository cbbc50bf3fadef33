// Tests of runner/cuda/cuda_worker.h through real worker processes
// (lathe-runner-worker --cuda, confined) and a LocalRunner, as `lathe tune
// --target cuda` measures. Without a GPU (CI) the worker must refuse to
// start, saying why; with one, faults take down only their worker. On the
// device machines, scripts/gpu-check.sh runs the same steps through
// lathe-gpu-check --runner-check (tools/runner_check.h).
#include "runner/cuda/cuda_worker.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compiler/codegen/cuda/cuda_driver.h"
#include "compiler/codegen/cuda/cuda_target.h"
#include "runner/local_runner.h"

#ifndef LATHE_RUNNER_WORKER
#error "LATHE_RUNNER_WORKER: the path of lathe-runner-worker"
#endif

namespace lathe::runner {
namespace {

bool HaveGpu() { return cuda::QueryDevice(0).ok(); }

LocalRunnerOptions CudaWorkerOptions() {
  LocalRunnerOptions options;
  options.worker_argv = {LATHE_RUNNER_WORKER, "--cuda"};
  options.memory_limit_bytes = 0;
  options.timeout_s = 60;
  return options;
}

TEST(CudaWorker, DoesNotStartWithoutAGpuAndSaysWhy) {
  if (HaveGpu()) GTEST_SKIP() << "this machine has a GPU";
  absl::StatusOr<std::unique_ptr<LocalRunner>> runner =
      LocalRunner::Start(CudaWorkerOptions());
  ASSERT_FALSE(runner.ok());
  EXPECT_EQ(runner.status().code(), absl::StatusCode::kUnavailable);
  const std::string message(runner.status().message());
  EXPECT_NE(message.find("exited with status 5"), std::string::npos) << message;
  EXPECT_NE(message.find("lathe worker: "), std::string::npos) << message;
  EXPECT_NE(message.find("CUDA"), std::string::npos) << message;
}

class CudaWorkerOnDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<cuda::DeviceInfo> device = cuda::QueryDevice(0);
    if (!device.ok()) GTEST_SKIP() << "no GPU: " << device.status();
    absl::StatusOr<Target> target = cuda::ArchTarget(device->arch);
    ASSERT_TRUE(target.ok()) << target.status();
    target_ = target->ToString();
    absl::StatusOr<std::unique_ptr<LocalRunner>> runner =
        LocalRunner::Start(CudaWorkerOptions());
    ASSERT_TRUE(runner.ok()) << runner.status();
    runner_ = *std::move(runner);
  }

  proto::MeasureResult Measure(const std::string& workload,
                               const std::string& fault = "") {
    proto::MeasureRequest request;
    request.set_workload(workload);
    request.set_target(target_);
    request.set_inject_fault(fault);
    request.set_min_repeats(3);
    request.set_check_seed(1);
    absl::StatusOr<proto::MeasureResult> result = runner_->Measure(request);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.value_or(proto::MeasureResult{});
  }

  std::string target_;
  std::unique_ptr<LocalRunner> runner_;
};

TEST_F(CudaWorkerOnDevice, AFaultTakesDownOnlyItsWorker) {
  proto::MeasureResult ok = Measure("matmul:M=128,N=128,K=64");
  EXPECT_EQ(ok.status(), proto::MEASURE_OK) << ok.error();
  EXPECT_GE(ok.times_s_size(), 3);
  proto::MeasureResult fault =
      Measure("matmul:M=128,N=128,K=64", "illegal_address");
  EXPECT_EQ(fault.status(), proto::MEASURE_RUN_ERROR);
  ok = Measure("softmax:M=64,N=1000");
  EXPECT_EQ(ok.status(), proto::MEASURE_OK) << ok.error();
  proto::MeasureResult crash = Measure("softmax:M=64,N=1000", "crash");
  EXPECT_EQ(crash.status(), proto::MEASURE_RUN_ERROR);
  EXPECT_NE(crash.error().find("signal 6"), std::string::npos) << crash.error();
  ok = Measure("relu:M=64,N=64");
  EXPECT_EQ(ok.status(), proto::MEASURE_OK) << ok.error();
}

TEST_F(CudaWorkerOnDevice, TheSandboxRefusesWritingAFileAndSaysSo) {
  proto::MeasureResult refused = Measure("relu:M=64,N=64", "open_file");
  EXPECT_EQ(refused.status(), proto::MEASURE_RUN_ERROR);
  EXPECT_NE(refused.error().find("the worker's sandbox refused: open"),
            std::string::npos)
      << refused.error();
}

}  // namespace
}  // namespace lathe::runner
