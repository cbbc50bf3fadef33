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

absl::Status CheckAgainstReference(const Workload& workload, const KernelCall& kernel,
                                   uint64_t seed) {
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

  absl::StatusOr<std::vector<TensorData>> expected = RunReference(workload, inputs);
  if (!expected.ok()) return expected.status();
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
