// Elementwise operators over [M,N]: add (two inputs) and relu.
#include <algorithm>
#include <optional>

#include "compiler/workload/ops/ops.h"

namespace lathe::ops {
namespace {

std::vector<ParamSpec> MatrixParams() {
  return {
      {"M", ParamKind::kDim, std::nullopt, "rows"},
      {"N", ParamKind::kDim, std::nullopt, "columns"},
      DTypeParam(),
  };
}

}  // namespace

OperatorDef MakeAddOp() {
  OperatorDef op;
  op.name = "add";
  op.summary = "C[M,N] = A[M,N] + B[M,N]";
  op.params = MatrixParams();
  op.build = [](const OpParams& p) -> absl::StatusOr<OpTensors> {
    const int64_t M = p["M"], N = p["N"];
    te::Tensor a = te::Placeholder("A", {M, N}, p.dtype);
    te::Tensor b = te::Placeholder("B", {M, N}, p.dtype);
    te::Tensor c =
        te::Compute("C", {M, N}, {"i", "j"}, [&](const std::vector<Expr>& ax) {
          return a({ax[0], ax[1]}) + b({ax[0], ax[1]});
        });
    return OpTensors{{a, b}, {c}};
  };
  op.reference = [](const OpParams&, const std::vector<const TensorData*>& in,
                    const std::vector<TensorData*>& out) {
    TensorData& c = *out[0];
    for (int64_t i = 0; i < c.size(); ++i) {
      c.values[i] = RoundToDType(in[0]->values[i] + in[1]->values[i], c.dtype);
    }
  };
  return op;
}

OperatorDef MakeReluOp() {
  OperatorDef op;
  op.name = "relu";
  op.summary = "Y[M,N] = max(X[M,N], 0)";
  op.params = MatrixParams();
  op.build = [](const OpParams& p) -> absl::StatusOr<OpTensors> {
    const int64_t M = p["M"], N = p["N"];
    te::Tensor x = te::Placeholder("X", {M, N}, p.dtype);
    te::Tensor y =
        te::Compute("Y", {M, N}, {"i", "j"}, [&](const std::vector<Expr>& ax) {
          return Max(x({ax[0], ax[1]}), Zero(p.dtype));
        });
    return OpTensors{{x}, {y}};
  };
  op.reference = [](const OpParams&, const std::vector<const TensorData*>& in,
                    const std::vector<TensorData*>& out) {
    TensorData& y = *out[0];
    for (int64_t i = 0; i < y.size(); ++i) {
      y.values[i] = RoundToDType(std::max(in[0]->values[i], 0.0), y.dtype);
    }
  };
  return op;
}

}  // namespace lathe::ops
