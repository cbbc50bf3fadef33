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

absl::StatusOr<const ReferenceCache::Entry*> ReferenceCache::Get(
    const Workload& workload, uint64_t seed,
    const std::function<absl::StatusOr<std::vector<TensorData>>()>& make_inputs) {
  const std::pair<std::string, uint64_t> key{workload.CanonicalForm(), seed};
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    absl::StatusOr<std::vector<TensorData>> inputs = make_inputs();
    if (!inputs.ok()) return inputs.status();
    absl::StatusOr<std::vector<TensorData>> outputs = RunReference(workload, *inputs);
    if (!outputs.ok()) return outputs.status();
    if (entries_.size() >= capacity_) {
      auto oldest = entries_.begin();
      for (auto e = entries_.begin(); e != entries_.end(); ++e) {
        if (e->second.last_used < oldest->second.last_used) oldest = e;
      }
      entries_.erase(oldest);
    }
    Entry entry;
    for (const TensorData& input : *inputs) {
      entry.inputs.emplace_back(input.values.begin(), input.values.end());
    }
    entry.outputs = *std::move(outputs);
    it = entries_.emplace(key, std::move(entry)).first;
  }
  it->second.last_used = ++clock_;
  return &it->second;
}

std::vector<float*> ReferenceCache::Arguments(const std::vector<int64_t>& sizes) {
  arguments_.resize(sizes.size());
  std::vector<float*> pointers;
  for (size_t i = 0; i < sizes.size(); ++i) {
    arguments_[i].resize(static_cast<size_t>(sizes[i]));
    pointers.push_back(arguments_[i].data());
  }
  return pointers;
}

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

absl::Status CheckAgainstReference(const Workload& workload, const KernelCall& kernel,
                                   uint64_t seed, ReferenceCache* cache) {
  std::vector<int64_t> sizes;
  int64_t output_elements = 0;
  for (const std::vector<te::Tensor>* tensors : {&workload.inputs(), &workload.outputs()}) {
    for (const te::Tensor& t : *tensors) {
      if (t.dtype() != DType::Float32()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "check: tensor ", t.name(), " is ", t.dtype().ToString(), ", not float32"));
      }
      int64_t size = 1;
      for (int64_t extent : t.shape()) size *= extent;
      sizes.push_back(size);
      if (tensors == &workload.outputs()) output_elements += sizes.back();
    }
  }
  const size_t num_inputs = workload.inputs().size();

  // The inputs and the expected outputs: cached, or computed for this check.
  std::vector<std::vector<float>> input_values;
  const std::vector<std::vector<float>>* inputs = &input_values;
  std::vector<TensorData> computed;
  const std::vector<TensorData>* expected = &computed;
  std::vector<TensorData> fresh_inputs;
  if (cache != nullptr) {
    absl::StatusOr<const ReferenceCache::Entry*> entry = cache->Get(
        workload, seed,
        [&]() -> absl::StatusOr<std::vector<TensorData>> { return MakeInputs(workload, seed); });
    if (!entry.ok()) return entry.status();
    inputs = &(*entry)->inputs;
    expected = &(*entry)->outputs;
  } else {
    fresh_inputs = MakeInputs(workload, seed);
    for (const TensorData& input : fresh_inputs) {
      input_values.emplace_back(input.values.begin(), input.values.end());
    }
  }

  // The kernel's arguments: copies of the inputs (a kernel that writes to
  // them must not change the next check's), and outputs poisoned with NaN
  // (a kernel that skips an element cannot pass).
  std::vector<std::vector<float>> own_arguments;
  std::vector<float*> args;
  if (cache != nullptr) {
    args = cache->Arguments(sizes);
  } else {
    for (int64_t size : sizes) {
      own_arguments.emplace_back(static_cast<size_t>(size));
      args.push_back(own_arguments.back().data());
    }
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (i < num_inputs) {
      std::copy((*inputs)[i].begin(), (*inputs)[i].end(), args[i]);
    } else {
      std::fill(args[i], args[i] + sizes[i], std::numeric_limits<float>::quiet_NaN());
    }
  }
  if (absl::Status st = kernel(args); !st.ok()) return st;

  if (cache == nullptr) {
    absl::StatusOr<std::vector<TensorData>> outputs = RunReference(workload, fresh_inputs);
    if (!outputs.ok()) return outputs.status();
    computed = *std::move(outputs);
  }
  // Rounding of a float32 sum of n terms grows about like n * eps; the float
  // work per output element stands in for n (2 per multiply-add).
  absl::StatusOr<int64_t> flops = FlopCount(workload);
  if (!flops.ok()) return flops.status();
  const double per_output = static_cast<double>(*flops) / std::max<int64_t>(1, output_elements);
  const double rtol = 1e-4;
  const double atol = std::max(1e-5, 1e-6 * per_output);
  for (size_t o = 0; o < workload.outputs().size(); ++o) {
    const TensorData& want = (*expected)[o];
    const float* got = args[num_inputs + o];
    // In place; the message (CheckAllClose's) only when an element differs.
    bool all_close = true;
    for (int64_t e = 0; e < want.size() && all_close; ++e) {
      all_close = IsClose(got[e], want.values[static_cast<size_t>(e)], rtol, atol);
    }
    if (all_close) continue;
    TensorData actual(want.dtype, want.shape);
    for (int64_t e = 0; e < actual.size(); ++e) actual.values[static_cast<size_t>(e)] = got[e];
    absl::Status close = CheckAllClose(actual, want, rtol, atol,
                                       absl::StrCat("output ", workload.outputs()[o].name(), " of ",
                                                    workload.CanonicalForm()));
    if (!close.ok()) return close;
  }
  return absl::OkStatus();
}

}  // namespace lathe
