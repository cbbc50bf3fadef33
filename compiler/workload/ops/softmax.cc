// softmax over the last axis of X[M,N], in the three stages a numerically
// safe softmax needs: the row maximum, the sum of exponentials, the
// normalization.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "compiler/workload/ops/ops.h"

namespace lathe::ops {

OperatorDef MakeSoftmaxOp() {
  OperatorDef op;
  op.name = "softmax";
  op.summary = "Y[M,N] = exp(X - rowmax) / rowsum, over the last axis";
  op.params = {
      {"M", ParamKind::kDim, std::nullopt, "rows"},
      {"N", ParamKind::kDim, std::nullopt, "row length (the softmax axis)"},
      DTypeParam(),
  };
  op.build = [](const OpParams& p) -> absl::StatusOr<OpTensors> {
    const int64_t M = p["M"], N = p["N"];
    const DType dtype = p.dtype;
    te::Tensor x = te::Placeholder("X", {M, N}, dtype);
    te::ReduceAxis k = te::MakeReduceAxis(N, "k");
    te::Tensor row_max = te::ComputeReduction(
        "row_max", {M}, {"i"}, [&](const std::vector<Expr>& ax) {
          return te::MaxOver(x({ax[0], k.var}), {k});
        });
    te::ReduceAxis k2 = te::MakeReduceAxis(N, "k");
    te::Tensor row_sum = te::ComputeReduction(
        "row_sum", {M}, {"i"}, [&](const std::vector<Expr>& ax) {
          return te::Sum(
              Call("exp", {x({ax[0], k2.var}) - row_max({ax[0]})}, dtype),
              {k2});
        });
    te::Tensor y =
        te::Compute("Y", {M, N}, {"i", "j"}, [&](const std::vector<Expr>& ax) {
          return Call("exp", {x({ax[0], ax[1]}) - row_max({ax[0]})}, dtype) /
                 row_sum({ax[0]});
        });
    return OpTensors{{x}, {y}};
  };
  op.reference = [](const OpParams& p, const std::vector<const TensorData*>& in,
                    const std::vector<TensorData*>& out) {
    const int64_t M = p["M"], N = p["N"];
    const std::vector<double>& x = in[0]->values;
    TensorData& y = *out[0];
    for (int64_t i = 0; i < M; ++i) {
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < N; ++j) m = std::max(m, x[i * N + j]);
      double sum = 0;
      for (int64_t j = 0; j < N; ++j) sum += std::exp(x[i * N + j] - m);
      for (int64_t j = 0; j < N; ++j) {
        y.values[i * N + j] =
            RoundToDType(std::exp(x[i * N + j] - m) / sum, y.dtype);
      }
    }
  };
  return op;
}

}  // namespace lathe::ops
