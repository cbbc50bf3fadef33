// Measuring CUDA candidates on one GPU in this process: what a GPU runner's
// worker does with each MeasureRequest of a cuda target, and what
// `lathe-gpu-check --tune` measures with.
//
// Per request: the candidate built (cuda_candidate.h: the workload parsed,
// the trace replayed, the default GPU schedule when the request has none,
// lowered, turned into CUDA C and compiled by NVRTC to a cubin for the
// device, build_ms), on the calling thread or in a child process with a
// deadline (Options::compile_command: past it, the candidate is a timeout),
// unless built already (MeasureBuilt); then, one request at a time, the module
// loaded and run on the check's inputs (check_seed), its outputs compared with
// the reference's (compiler/measure/reference_check.h; computed once per
// workload and seed): the CPU reference for workloads of at most
// kCpuReferenceMaxFlops, else the default GPU schedule's kernel on the
// device (checked against the CPU reference at smaller shapes by the tests
// and scripts/gpu-check.sh); compared on the device when the operands are
// large (device_check.h), else on the host; then timed with CUDA events: one
// warm-up call, then samples of enough back-to-back calls for kSampleTime of
// GPU time each, until the samples total min_time_s with at least min_repeats
// (at most max_repeats), the L2 cache flushed (a device buffer of kFlushBytes
// overwritten) before each sample on request. A candidate that faults
// (illegal address, launch failure) leaves the CUDA context unusable: its
// result is a run error, and every later request fails too, so a runner
// measures in a worker process it replaces after a fault.
// Tests: tests/runner/cuda/cuda_measurer_test.cc (skip without a GPU).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "compiler/codegen/cuda/cuda_driver.h"
#include "compiler/measure/reference_check.h"
#include "compiler/target/target.h"
#include "proto/measure.pb.h"
#include "runner/cuda/cuda_candidate.h"
#include "runner/cuda/device_check.h"

namespace lathe::runner {

class CudaMeasurer {
 public:
  static constexpr int64_t kCpuReferenceMaxFlops = int64_t{1} << 31;
  static constexpr double kSampleTime = 0.002;  // seconds of GPU time
  static constexpr int64_t kFlushBytes = int64_t{256} << 20;

  using Options = CudaBuildOptions;  // cuda_candidate.h

  // Measures on `device` (not owned; it must outlive the measurer) for
  // `target`, a cuda target the device can run. Errors: InvalidArgument for
  // a target that is not cuda.
  static absl::StatusOr<std::unique_ptr<CudaMeasurer>> Create(
      cuda::CudaDevice* device, const Target& target, Options options);
  ~CudaMeasurer();

  // A result whatever the candidate does; `device` filled from the device.
  // Requests of another target are a build error naming both. Thread-safe:
  // candidates are built (replay to cubin) on the calling threads side by
  // side, and loaded, checked and timed on the device one at a time (the
  // device's context made current on the thread).
  proto::MeasureResult Measure(const proto::MeasureRequest& request);
  // The same with the candidate built already (BuildCudaCandidate of this
  // request, with target() and options(): ahead, on another thread).
  proto::MeasureResult MeasureBuilt(const proto::MeasureRequest& request,
                                    const CudaCandidate& built);

  const Target& target() const { return target_; }
  const Options& options() const { return options_; }

 private:
  CudaMeasurer(cuda::CudaDevice* device, const Target& target, Options options);
  // The default GPU schedule's outputs for `inputs`, on the device.
  absl::StatusOr<std::vector<TensorData>> DeviceReference(
      const Workload& workload, const std::vector<TensorData>& inputs);

  // The check of a loaded candidate: on the device for large operands
  // (device_check.h; a mismatch there settled by the host check, which
  // names the element), else on the host.
  absl::Status CheckCandidate(const Workload& workload, uint64_t seed,
                              cuda::LoadedModule* module)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(device_mutex_);

  cuda::CudaDevice* device_;
  Target target_;
  Options options_;
  absl::Mutex device_mutex_;
  ReferenceCache references_ ABSL_GUARDED_BY(device_mutex_);
  // Made at the first large workload; its error, when it cannot be made,
  // keeps every check on the host.
  std::unique_ptr<DeviceCheck> device_check_ ABSL_GUARDED_BY(device_mutex_);
  absl::Status device_check_status_ ABSL_GUARDED_BY(device_mutex_);
  cuda::DevicePtr flush_ = 0;
};

}  // namespace lathe::runner
