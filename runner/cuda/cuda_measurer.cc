// Measuring CUDA candidates (cuda_measurer.h).
#include "runner/cuda/cuda_measurer.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/cuda/cuda_program.h"
#include "compiler/codegen/cuda/nvrtc_compiler.h"
#include "compiler/workload/flop_count.h"
#include "compiler/workload/reference.h"
#include "compiler/workload/spec.h"
#include "runner/cuda/child_compile.h"

namespace lathe::runner {
namespace {

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudaMeasurer>> CudaMeasurer::Create(
    cuda::CudaDevice* device, const Target& target, Options options) {
  if (!target.IsCuda()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cuda measurer: target ", target.ToString(), " is not a cuda target"));
  }
  std::unique_ptr<CudaMeasurer> measurer(
      new CudaMeasurer(device, target, std::move(options)));
  LATHE_ASSIGN_OR_RETURN(measurer->flush_, device->Alloc(kFlushBytes));
  return measurer;
}

CudaMeasurer::CudaMeasurer(cuda::CudaDevice* device, const Target& target,
                           Options options)
    : device_(device),
      target_(target),
      options_(std::move(options)),
      references_(
          /*capacity=*/2,
          [this](const Workload& workload,
                 const std::vector<TensorData>& inputs)
              -> absl::StatusOr<std::vector<TensorData>> {
            absl::StatusOr<int64_t> flops = FlopCount(workload);
            if (flops.ok() && *flops <= kCpuReferenceMaxFlops) {
              return RunReference(workload, inputs);
            }
            return DeviceReference(workload, inputs);
          }) {}

CudaMeasurer::~CudaMeasurer() {
  if (flush_ != 0) device_->Free(flush_);
}

absl::StatusOr<std::vector<TensorData>> CudaMeasurer::DeviceReference(
    const Workload& workload, const std::vector<TensorData>& inputs) {
  proto::MeasureRequest plain;
  plain.set_workload(workload.CanonicalForm());
  plain.set_target(target_.ToString());
  CudaCandidate built = BuildCudaCandidate(plain, target_, options_);
  LATHE_RETURN_IF_ERROR(built.status);
  LATHE_ASSIGN_OR_RETURN(
      std::unique_ptr<cuda::LoadedModule> module,
      cuda::LoadedModule::Load(device_, built.module, built.cubin));
  std::vector<std::vector<float>> buffers;
  for (const TensorData& input : inputs)
    buffers.emplace_back(input.values.begin(), input.values.end());
  std::vector<TensorData> outputs;
  for (const te::Tensor& t : workload.outputs()) {
    outputs.push_back(TensorData::Like(*t.buffer()));
    buffers.emplace_back(outputs.back().values.size());
  }
  std::vector<float*> params;
  for (std::vector<float>& b : buffers) params.push_back(b.data());
  LATHE_RETURN_IF_ERROR(module->Run(params, static_cast<int>(inputs.size())));
  for (size_t o = 0; o < outputs.size(); ++o) {
    const std::vector<float>& got = buffers[inputs.size() + o];
    outputs[o].values.assign(got.begin(), got.end());
  }
  return outputs;
}

absl::Status CudaMeasurer::CheckCandidate(const Workload& workload,
                                          uint64_t seed,
                                          cuda::LoadedModule* module) {
  const int num_inputs = static_cast<int>(workload.inputs().size());
  auto on_host = [&] {
    return CheckAgainstReference(
        workload,
        [&](const std::vector<float*>& args) {
          return module->Run(args, num_inputs);
        },
        seed, &references_);
  };
  // Errors of the reference (a workload not all float32) are the host
  // check's to report.
  absl::StatusOr<const ReferenceCache::Entry*> entry =
      references_.Get(workload, seed);
  if (!entry.ok() || !DeviceCheck::Wants(**entry) ||
      !device_check_status_.ok()) {
    return on_host();
  }
  if (device_check_ == nullptr) {
    absl::StatusOr<std::unique_ptr<DeviceCheck>> made =
        DeviceCheck::Create(device_, device_->info().arch);
    if (!made.ok()) {
      device_check_status_ = made.status();
      return on_host();
    }
    device_check_ = *std::move(made);
  }
  absl::Status checked =
      device_check_->Check(absl::StrCat(workload.CanonicalForm(), "#", seed),
                           **entry, workload, module);
  // A mismatch is settled (and its element named) on the host.
  return absl::IsFailedPrecondition(checked) ? on_host() : checked;
}

proto::MeasureResult CudaMeasurer::Measure(
    const proto::MeasureRequest& request) {
  return MeasureBuilt(request, BuildCudaCandidate(request, target_, options_));
}

proto::MeasureResult CudaMeasurer::MeasureBuilt(
    const proto::MeasureRequest& request, const CudaCandidate& built) {
  proto::MeasureResult result;
  result.set_device(device_->info().name);
  auto fail = [&](proto::MeasureStatus status, const absl::Status& error) {
    result.set_status(status);
    result.set_error(std::string(error.message()));
    return result;
  };
  result.set_structural_hash(built.structural_hash);
  result.set_build_ms(built.build_ms);
  result.set_built_ahead(built.built_ahead);
  if (!built.ok()) {
    return fail(absl::IsDeadlineExceeded(built.status)
                    ? proto::MEASURE_TIMEOUT
                    : proto::MEASURE_BUILD_ERROR,
                built.status);
  }
  if (request.build_only()) {
    result.set_status(proto::MEASURE_OK);
    return result;
  }
  const Workload* workload = &*built.workload;

  // The device, one candidate at a time.
  absl::MutexLock lock(&device_mutex_);
  const auto run_start = std::chrono::steady_clock::now();
  if (absl::Status current = device_->MakeCurrent(); !current.ok())
    return fail(proto::MEASURE_RUN_ERROR, current);
  absl::StatusOr<std::unique_ptr<cuda::LoadedModule>> loaded =
      cuda::LoadedModule::Load(device_, built.module, built.cubin);
  if (!loaded.ok()) return fail(proto::MEASURE_RUN_ERROR, loaded.status());
  cuda::LoadedModule& module = **loaded;
  absl::Status checked =
      CheckCandidate(*workload, request.check_seed(), &module);
  result.set_check_ms(MsSince(run_start));
  if (!checked.ok()) {
    return fail(absl::IsFailedPrecondition(checked)
                    ? proto::MEASURE_WRONG_RESULT
                    : proto::MEASURE_RUN_ERROR,
                checked);
  }

  // Timing: a warm-up call, one call timed to size the samples, then the
  // samples.
  const bool flush = request.flush_cache();
  const int min_repeats = std::max(1, request.min_repeats());
  const int max_repeats = std::max(
      min_repeats, request.max_repeats() <= 0 ? 100000 : request.max_repeats());
  absl::Status status = module.Launch();
  if (status.ok()) status = device_->Synchronize();
  if (status.ok()) status = device_->StartTimer();
  if (status.ok()) status = module.Launch();
  absl::StatusOr<double> once_ms =
      status.ok() ? device_->StopTimer() : absl::StatusOr<double>(status);
  if (!once_ms.ok()) return fail(proto::MEASURE_RUN_ERROR, once_ms.status());
  const int calls =
      flush ? 1
            : static_cast<int>(std::clamp(
                  kSampleTime * 1e3 / std::max(*once_ms, 1e-4), 1.0, 10000.0));
  double total_s = 0;
  for (int sample = 0; sample < min_repeats ||
                       (total_s < request.min_time_s() && sample < max_repeats);
       ++sample) {
    if (flush) {
      status =
          device_->Fill(flush_, static_cast<uint8_t>(sample & 1), kFlushBytes);
    }
    if (status.ok()) status = device_->StartTimer();
    for (int c = 0; c < calls && status.ok(); ++c) status = module.Launch();
    absl::StatusOr<double> ms =
        status.ok() ? device_->StopTimer() : absl::StatusOr<double>(status);
    if (!ms.ok()) return fail(proto::MEASURE_RUN_ERROR, ms.status());
    result.add_times_s(*ms * 1e-3 / calls);
    total_s += *ms * 1e-3;
  }
  result.set_run_ms(MsSince(run_start));
  result.set_status(proto::MEASURE_OK);
  return result;
}

}  // namespace lathe::runner
