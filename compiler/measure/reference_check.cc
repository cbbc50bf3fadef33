#include "compiler/measure/reference_check.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "compiler/interp/allclose.h"
#include "compiler/interp/random_fill.h"
#include "compiler/workload/flop_count.h"
#include "compiler/workload/reference.h"

namespace lathe {

absl::StatusOr<const std::vector<TensorData>*> ReferenceCache::Get(
    const Workload& workload, uint64_t seed, const std::vector<TensorData>& inputs) {
  const std::pair<std::string, uint64_t> key{workload.CanonicalForm(), seed};
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    absl::StatusOr<std::vector<TensorData>> outputs = RunReference(workload, inputs);
    if (!outputs.ok()) return outputs.status();
    if (entries_.size() >= capacity_) {
      auto oldest = entries_.begin();
      for (auto e = entries_.begin(); e != entries_.end(); ++e) {
        if (e->second.last_used < oldest->second.last_used) oldest = e;
      }
      entries_.erase(oldest);
    }
    it = entries_.emplace(key, Entry{*std::move(outputs), 0}).first;
  }
  it->second.last_used = ++clock_;
  return &it->second.outputs;
}

absl::Status CheckAgainstReference(const Workload& workload, const KernelCall& kernel,
                                   uint64_t seed, ReferenceCache* cache) {
  std::vector<TensorData> inputs;
  std::vector<std::vector<float>> storage;
  std::vector<float*> args;
  int64_t output_elements = 0;
  auto add = [&](const te::Tensor& t) -> absl::Status {
    if (t.dtype() != DType::Float32()) {
      return absl::InvalidArgumentError(
          absl::StrCat("check: tensor ", t.name(), " is ", t.dtype().ToString(), ", not float32"));
    }
    return absl::OkStatus();
  };
  storage.reserve(workload.inputs().size() + workload.outputs().size());
  for (size_t i = 0; i < workload.inputs().size(); ++i) {
    const te::Tensor& t = workload.inputs()[i];
    if (absl::Status st = add(t); !st.ok()) return st;
    TensorData data(t.dtype(), t.shape());
    FillRandom(&data, seed + i);
    storage.emplace_back(data.values.begin(), data.values.end());
    inputs.push_back(std::move(data));
  }
  for (const te::Tensor& t : workload.outputs()) {
    if (absl::Status st = add(t); !st.ok()) return st;
    TensorData like(t.dtype(), t.shape());
    output_elements += like.size();
    storage.emplace_back(like.size(), std::numeric_limits<float>::quiet_NaN());
  }
  for (std::vector<float>& s : storage) args.push_back(s.data());
  if (absl::Status st = kernel(args); !st.ok()) return st;

  std::vector<TensorData> computed;
  const std::vector<TensorData>* expected = &computed;
  if (cache != nullptr) {
    absl::StatusOr<const std::vector<TensorData>*> cached = cache->Get(workload, seed, inputs);
    if (!cached.ok()) return cached.status();
    expected = *cached;
  } else {
    absl::StatusOr<std::vector<TensorData>> outputs = RunReference(workload, inputs);
    if (!outputs.ok()) return outputs.status();
    computed = *std::move(outputs);
  }
  // Rounding of a float32 sum of n terms grows about like n * eps; the float
  // work per output element stands in for n (2 per multiply-add).
  absl::StatusOr<int64_t> flops = FlopCount(workload);
  if (!flops.ok()) return flops.status();
  double per_output = static_cast<double>(*flops) / std::max<int64_t>(1, output_elements);
  double atol = std::max(1e-5, 1e-6 * per_output);
  for (size_t o = 0; o < workload.outputs().size(); ++o) {
    TensorData actual((*expected)[o].dtype, (*expected)[o].shape);
    const std::vector<float>& got = storage[workload.inputs().size() + o];
    for (int64_t e = 0; e < actual.size(); ++e) actual.values[e] = got[e];
    absl::Status close = CheckAllClose(actual, (*expected)[o], /*rtol=*/1e-4, atol,
                                       absl::StrCat("output ", workload.outputs()[o].name(), " of ",
                                                    workload.CanonicalForm()));
    if (!close.ok()) return close;
  }
  return absl::OkStatus();
}

}  // namespace lathe
