// The check on the device (device_check.h).
#include "runner/cuda/device_check.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/cuda/nvrtc_compiler.h"

namespace lathe::runner {

std::string CompareKernelSource() {
  // The reference is double (TensorData's values), as on the host; the
  // products and sums of the bound are rounded one at a time (no fused
  // multiply-add), as IsClose's are.
  return absl::StrCat(R"(extern "C" __global__ void __launch_bounds__()",
                      DeviceCheck::kThreads, ") ", kCompareKernelName,
                      R"((
    const float* __restrict__ got, const double* __restrict__ want,
    long long n, double rtol, double atol, long long* __restrict__ first_bad) {
  __shared__ long long bad[)",
                      DeviceCheck::kThreads, R"(];
  long long mine = n;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const double a = got[i];
    const double e = want[i];
    bool close;
    if (isnan(a) || isnan(e)) {
      close = isnan(a) && isnan(e);
    } else if (isinf(a) || isinf(e)) {
      close = a == e;
    } else {
      close = fabs(__dsub_rn(a, e)) <= __dadd_rn(atol, __dmul_rn(rtol, fabs(e)));
    }
    if (!close) {
      mine = i;  // the first of this thread's elements: they only grow
      break;
    }
  }
  bad[threadIdx.x] = mine;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s && bad[threadIdx.x + s] < bad[threadIdx.x])
      bad[threadIdx.x] = bad[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) first_bad[blockIdx.x] = bad[0];
}
)");
}

absl::StatusOr<std::unique_ptr<DeviceCheck>> DeviceCheck::Create(
    cuda::CudaDevice* device, const std::string& arch) {
  LATHE_ASSIGN_OR_RETURN(
      cuda::CompiledCuda compiled,
      cuda::CompileCuda(CompareKernelSource(), arch, /*cubin=*/true,
                        "lathe_compare_outputs.cu"));
  LATHE_ASSIGN_OR_RETURN(void* module, device->LoadModule(compiled.cubin));
  LATHE_ASSIGN_OR_RETURN(void* function,
                         device->Function(module, kCompareKernelName));
  std::unique_ptr<DeviceCheck> check(new DeviceCheck(device, function));
  LATHE_ASSIGN_OR_RETURN(check->first_bad_,
                         device->Alloc(kMaxBlocks * sizeof(int64_t)));
  return check;
}

DeviceCheck::~DeviceCheck() {
  Release();
  device_->Free(first_bad_);
}

bool DeviceCheck::Wants(const ReferenceCache::Entry& entry) {
  int64_t bytes = 0;
  for (const std::vector<float>& input : entry.inputs)
    bytes += static_cast<int64_t>(input.size()) * 4;
  for (const TensorData& output : entry.outputs) bytes += output.size() * 4;
  return bytes >= kMinBytes;
}

void DeviceCheck::Release() {
  for (cuda::DevicePtr p : inputs_) device_->Free(p);
  for (cuda::DevicePtr p : references_) device_->Free(p);
  inputs_.clear();
  references_.clear();
  resident_key_.clear();
}

absl::Status DeviceCheck::Upload(const std::string& key,
                                 const ReferenceCache::Entry& entry) {
  if (!resident_key_.empty() && key == resident_key_) return absl::OkStatus();
  Release();
  // Allocates `bytes` on the device, records the pointer and copies `data`.
  auto upload = [&](const void* data, int64_t bytes,
                    std::vector<cuda::DevicePtr>* into) {
    absl::StatusOr<cuda::DevicePtr> ptr = device_->Alloc(bytes);
    if (!ptr.ok()) return ptr.status();
    into->push_back(*ptr);
    return device_->CopyToDevice(*ptr, data, bytes);
  };
  absl::Status status;
  for (size_t i = 0; status.ok() && i < entry.inputs.size(); ++i) {
    status = upload(entry.inputs[i].data(),
                    static_cast<int64_t>(entry.inputs[i].size()) * 4, &inputs_);
  }
  for (size_t o = 0; status.ok() && o < entry.outputs.size(); ++o) {
    const std::vector<double>& values = entry.outputs[o].values;
    status = upload(values.data(), static_cast<int64_t>(values.size()) * 8,
                    &references_);
  }
  if (!status.ok()) {
    Release();
    return status;
  }
  resident_key_ = key;
  return absl::OkStatus();
}

absl::Status DeviceCheck::Check(const std::string& key,
                                const ReferenceCache::Entry& entry,
                                const Workload& workload,
                                cuda::LoadedModule* module) {
  LATHE_RETURN_IF_ERROR(Upload(key, entry));
  const int num_inputs = static_cast<int>(entry.inputs.size());
  for (int i = 0; i < num_inputs; ++i) {
    const cuda::DevicePtr dst = module->ParamPointer(i);
    if (dst == 0) {
      return absl::InternalError(
          absl::StrCat("device check: the candidate has no buffer for input ",
                       i, " of ", workload.CanonicalForm()));
    }
    LATHE_RETURN_IF_ERROR(device_->CopyOnDevice(
        dst, inputs_[i], static_cast<int64_t>(entry.inputs[i].size()) * 4));
  }
  std::vector<cuda::DevicePtr> outputs;
  for (size_t o = 0; o < entry.outputs.size(); ++o) {
    const cuda::DevicePtr dst = module->ParamPointer(num_inputs + o);
    if (dst == 0) {
      return absl::InternalError(
          absl::StrCat("device check: the candidate has no buffer for output ",
                       o, " of ", workload.CanonicalForm()));
    }
    LATHE_RETURN_IF_ERROR(
        device_->Fill(dst, 0xFF, entry.outputs[o].size() * 4));
    outputs.push_back(dst);
  }
  LATHE_RETURN_IF_ERROR(module->Launch());
  LATHE_RETURN_IF_ERROR(device_->Synchronize());

  std::vector<int64_t> first_bad(kMaxBlocks);
  for (size_t o = 0; o < outputs.size(); ++o) {
    long long n = entry.outputs[o].size();
    const int64_t blocks =
        std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks);
    cuda::DevicePtr got = outputs[o];
    cuda::DevicePtr want = references_[o];
    double rtol = kCheckRtol;
    double atol = entry.atol;
    cuda::DevicePtr bad = first_bad_;
    LATHE_RETURN_IF_ERROR(device_->Launch(
        function_, cuda::Dim3{blocks, 1, 1}, cuda::Dim3{kThreads, 1, 1}, 0,
        {&got, &want, &n, &rtol, &atol, &bad}));
    LATHE_RETURN_IF_ERROR(device_->CopyToHost(first_bad.data(), first_bad_,
                                              blocks * sizeof(int64_t)));
    const int64_t first =
        *std::min_element(first_bad.begin(), first_bad.begin() + blocks);
    if (first < n) {
      return absl::FailedPreconditionError(
          absl::StrCat("output ", workload.outputs()[o].name(), " of ",
                       workload.CanonicalForm(), ": element ", first,
                       " differs from the reference (checked on the device)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace lathe::runner
