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

namespace {

// The check's inputs for `seed` (random_fill.h), float32-exact.
std::vector<TensorData> MakeInputs(const Workload& workload, uint64_t seed) {
  std::vector<TensorData> inputs;
  for (size_t i = 0; i < workload.inputs().size(); ++i) {
    const te::Tensor& t = workload.inputs()[i];
    TensorData data(t.dtype(), t.shape());
    FillRandom(&data, seed + i);
    inputs.push_back(std::move(data));
  }
  return inputs;
}

}  // namespace

absl::StatusOr<const ReferenceCache::Entry*> ReferenceCache::Get(
    const Workload& workload, uint64_t seed) {
  for (const std::vector<te::Tensor>* tensors :
       {&workload.inputs(), &workload.outputs()}) {
    for (const te::Tensor& t : *tensors) {
      if (t.dtype() != DType::Float32()) {
        return absl::InvalidArgumentError(
            absl::StrCat("check: tensor ", t.name(), " is ",
                         t.dtype().ToString(), ", not float32"));
      }
    }
  }
  const std::pair<std::string, uint64_t> key{workload.CanonicalForm(), seed};
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    const std::vector<TensorData> inputs = MakeInputs(workload, seed);
    absl::StatusOr<std::vector<TensorData>> outputs =
        reference_ ? reference_(workload, inputs)
                   : RunReference(workload, inputs);
    if (!outputs.ok()) return outputs.status();
    // Rounding of a float32 sum of n terms grows about like n * eps; the
    // float work per output element stands in for n (2 per multiply-add).
    absl::StatusOr<int64_t> flops = FlopCount(workload);
    if (!flops.ok()) return flops.status();
    int64_t output_elements = 0;
    for (const TensorData& output : *outputs) output_elements += output.size();
    const double per_output =
        static_cast<double>(*flops) /
        static_cast<double>(std::max<int64_t>(1, output_elements));
    if (entries_.size() >= capacity_) {
      auto oldest = entries_.begin();
      for (auto e = entries_.begin(); e != entries_.end(); ++e) {
        if (e->second.last_used < oldest->second.last_used) oldest = e;
      }
      entries_.erase(oldest);
    }
    Entry entry;
    for (const TensorData& input : inputs) {
      entry.inputs.emplace_back(input.values.begin(), input.values.end());
    }
    entry.outputs = *std::move(outputs);
    entry.atol = std::max(1e-5, 1e-6 * per_output);
    it = entries_.emplace(key, std::move(entry)).first;
  }
  it->second.last_used = ++clock_;
  return &it->second;
}

std::vector<float*> ReferenceCache::Arguments(const Entry& entry) {
  arguments_.resize(entry.inputs.size() + entry.outputs.size());
  std::vector<float*> pointers;
  for (size_t i = 0; i < arguments_.size(); ++i) {
    const size_t size =
        i < entry.inputs.size()
            ? entry.inputs[i].size()
            : static_cast<size_t>(
                  entry.outputs[i - entry.inputs.size()].size());
    arguments_[i].resize(size);
    pointers.push_back(arguments_[i].data());
  }
  return pointers;
}

absl::Status CheckAgainstReference(const Workload& workload,
                                   const KernelCall& kernel, uint64_t seed,
                                   ReferenceCache* cache) {
  // Without a cache, one for this check.
  ReferenceCache own(/*capacity=*/1);
  if (cache == nullptr) cache = &own;
  absl::StatusOr<const ReferenceCache::Entry*> found =
      cache->Get(workload, seed);
  if (!found.ok()) return found.status();
  const ReferenceCache::Entry& entry = **found;

  // The kernel's arguments: copies of the inputs (a kernel that writes to
  // them must not change the next check's), and outputs poisoned with NaN
  // (a kernel that skips an element cannot pass).
  const std::vector<float*> args = cache->Arguments(entry);
  const size_t num_inputs = entry.inputs.size();
  for (size_t i = 0; i < num_inputs; ++i) {
    std::copy(entry.inputs[i].begin(), entry.inputs[i].end(), args[i]);
  }
  for (size_t o = 0; o < entry.outputs.size(); ++o) {
    std::fill(args[num_inputs + o],
              args[num_inputs + o] + entry.outputs[o].size(),
              std::numeric_limits<float>::quiet_NaN());
  }
  if (absl::Status st = kernel(args); !st.ok()) return st;

  const double rtol = kCheckRtol;
  for (size_t o = 0; o < entry.outputs.size(); ++o) {
    const TensorData& want = entry.outputs[o];
    const float* got = args[num_inputs + o];
    // In place; the message (CheckAllClose's) only when an element differs.
    bool all_close = true;
    for (int64_t e = 0; e < want.size() && all_close; ++e) {
      all_close = IsClose(got[e], want.values[static_cast<size_t>(e)], rtol,
                          entry.atol);
    }
    if (all_close) continue;
    TensorData actual(want.dtype, want.shape);
    for (int64_t e = 0; e < actual.size(); ++e)
      actual.values[static_cast<size_t>(e)] = got[e];
    absl::Status close =
        CheckAllClose(actual, want, rtol, entry.atol,
                      absl::StrCat("output ", workload.outputs()[o].name(),
                                   " of ", workload.CanonicalForm()));
    if (!close.ok()) return close;
  }
  return absl::OkStatus();
}

}  // namespace lathe
