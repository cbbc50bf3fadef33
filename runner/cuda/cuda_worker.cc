#include "runner/cuda/cuda_worker.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/cuda/cuda_driver.h"
#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/codegen/cuda/nvrtc_compiler.h"
#include "runner/cuda/cuda_build_ahead.h"
#include "runner/cuda/cuda_measurer.h"
#include "runner/cuda/device_target.h"

namespace lathe::runner {
namespace {

// Measured once at start, before the filter: small, one kernel.
constexpr char kWarmUpWorkload[] = "softmax:M=4,N=128";

// inject_fault "illegal_address": a kernel that writes to address 0.
constexpr char kFaultSource[] =
    "extern \"C\" __global__ void lathe_fault() { *(volatile int*)0 = 1; }\n";

proto::MeasureResult Failed(proto::MeasureStatus status,
                            const absl::Status& error) {
  proto::MeasureResult result;
  result.set_status(status);
  result.set_error(std::string(error.message()));
  return result;
}

// The device and the measurer of the target last asked for.
class CudaWorker {
 public:
  static absl::StatusOr<std::unique_ptr<CudaWorker>> Start() {
    LATHE_ASSIGN_OR_RETURN(std::unique_ptr<cuda::CudaDevice> device,
                           cuda::CudaDevice::Open(0));
    LATHE_RETURN_IF_ERROR(cuda::CheckNvrtc());
    std::unique_ptr<CudaWorker> worker(new CudaWorker(std::move(device)));
    // The architecture's own limits: what a parsed target of it has, and
    // within any device of it (device_target.h).
    LATHE_ASSIGN_OR_RETURN(Target target,
                           cuda::ArchTarget(worker->device_->info().arch));
    proto::MeasureRequest warm_up;
    warm_up.set_workload(kWarmUpWorkload);
    warm_up.set_target(target.ToString());
    warm_up.set_min_repeats(1);
    warm_up.set_max_repeats(1);
    const proto::MeasureResult result = worker->Measure(warm_up);
    if (result.status() != proto::MEASURE_OK) {
      return absl::FailedPreconditionError(
          absl::StrCat("the first kernel on ", worker->device_->info().name,
                       " failed: ", result.error()));
    }
    return worker;
  }

  proto::MeasureResult Measure(const proto::MeasureRequest& request) {
    absl::StatusOr<Target> target = cuda::ParseCudaTarget(request.target());
    if (!target.ok())
      return Failed(proto::MEASURE_BUILD_ERROR, target.status());
    if (absl::Status st = CheckDeviceMeasures(*target, device_->info());
        !st.ok()) {
      return Failed(proto::MEASURE_BUILD_ERROR, st);
    }
    if (measurer_ == nullptr || !(measurer_->target() == *target)) {
      ahead_.reset();
      measurer_.reset();  // its buffers freed before the next one's
      absl::StatusOr<std::unique_ptr<CudaMeasurer>> made =
          CudaMeasurer::Create(device_.get(), *target, {});
      if (!made.ok()) return Failed(proto::MEASURE_RUN_ERROR, made.status());
      measurer_ = *std::move(made);
      // Every CPU but the measuring thread's builds ahead.
      ahead_ = std::make_unique<CudaBuildAhead>(
          std::max(1, AllowedCpuCount() - 1), *target, measurer_->options());
    }
    proto::MeasureRequest canonical = request;
    canonical.set_target(target->ToString());
    if (canonical.build_only())
      return measurer_->MeasureBuilt(canonical, ahead_->BuildAll(canonical));
    ahead_->Add(canonical);
    const std::string& fault = request.inject_fault();
    if (fault.empty())
      return measurer_->MeasureBuilt(canonical, ahead_->Take(canonical));
    canonical.set_build_only(true);
    proto::MeasureResult result = measurer_->Measure(canonical);
    if (result.status() != proto::MEASURE_OK) return result;
    return InjectFault(fault, std::move(result));
  }

 private:
  explicit CudaWorker(std::unique_ptr<cuda::CudaDevice> device)
      : device_(std::move(device)) {}

  proto::MeasureResult InjectFault(const std::string& fault,
                                   proto::MeasureResult result) {
    if (fault == "crash") std::abort();
    if (fault == "hang") {
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    absl::Status status;
    if (fault == "illegal_address") {
      status = RunFaultingKernel();
    } else if (fault == "open_file") {
      const int fd = open("/proc/self/status", O_WRONLY | O_CLOEXEC);
      status = fd >= 0 ? absl::OkStatus()
                       : absl::PermissionDeniedError(
                             absl::StrCat("open_file: ", std::strerror(errno)));
      if (fd >= 0) close(fd);
    } else {
      status = absl::InvalidArgumentError(
          absl::StrCat("unknown inject_fault \"", fault, "\""));
    }
    result.set_status(status.ok() ? proto::MEASURE_OK
                                  : proto::MEASURE_RUN_ERROR);
    result.set_error(std::string(status.message()));
    return result;
  }

  absl::Status RunFaultingKernel() {
    LATHE_ASSIGN_OR_RETURN(
        cuda::CompiledCuda compiled,
        cuda::CompileCuda(kFaultSource, device_->info().arch, /*cubin=*/true));
    LATHE_RETURN_IF_ERROR(device_->MakeCurrent());
    LATHE_ASSIGN_OR_RETURN(void* module, device_->LoadModule(compiled.cubin));
    LATHE_ASSIGN_OR_RETURN(void* function,
                           device_->Function(module, "lathe_fault"));
    LATHE_RETURN_IF_ERROR(device_->Launch(function, {1, 1, 1}, {1, 1, 1}, 0,
                                          /*args=*/{}));
    return device_->Synchronize();
  }

  std::unique_ptr<cuda::CudaDevice> device_;
  std::unique_ptr<CudaMeasurer> measurer_;
  std::unique_ptr<CudaBuildAhead> ahead_;  // for measurer_'s target
};

}  // namespace

int RunCudaMeasureWorker(int in_fd, int out_fd,
                         const WorkerConfinement& confinement) {
  std::unique_ptr<CudaWorker> worker;
  return ServeMeasureRequests(
      in_fd, out_fd, confinement, [&]() -> absl::StatusOr<MeasureFunction> {
        LATHE_ASSIGN_OR_RETURN(worker, CudaWorker::Start());
        return [&](const proto::MeasureRequest& request) {
          try {
            return worker->Measure(request);
          } catch (const std::exception& e) {
            return Failed(
                proto::MEASURE_RUN_ERROR,
                absl::InternalError(absl::StrCat("exception: ", e.what())));
          }
        };
      });
}

}  // namespace lathe::runner
