// matmul, batch_matmul and dense (with optional fused bias and relu).
#include <optional>

#include "compiler/workload/ops/ops.h"

namespace lathe::ops {

OperatorDef MakeMatmulOp() {
  OperatorDef op;
  op.name = "matmul";
  op.summary = "C[M,N] = A[M,K] * B[K,N]";
  op.params = {
      {"M", ParamKind::kDim, std::nullopt, "rows of A and C"},
      {"N", ParamKind::kDim, std::nullopt, "columns of B and C"},
      {"K", ParamKind::kDim, std::nullopt, "reduction length"},
      DTypeParam(),
  };
  op.build = [](const OpParams& p) -> absl::StatusOr<OpTensors> {
    const int64_t M = p["M"], N = p["N"], K = p["K"];
    te::Tensor a = te::Placeholder("A", {M, K}, p.dtype);
    te::Tensor b = te::Placeholder("B", {K, N}, p.dtype);
    te::ReduceAxis k = te::MakeReduceAxis(K, "k");
    te::Tensor c = te::ComputeReduction(
        "C", {M, N}, {"i", "j"}, [&](const std::vector<Expr>& ax) {
          return te::Sum(a({ax[0], k.var}) * b({k.var, ax[1]}), {k});
        });
    return OpTensors{{a, b}, {c}};
  };
  op.reference = [](const OpParams& p, const std::vector<const TensorData*>& in,
                    const std::vector<TensorData*>& out) {
    const int64_t M = p["M"], N = p["N"], K = p["K"];
    const std::vector<double>& a = in[0]->values;
    const std::vector<double>& b = in[1]->values;
    TensorData& c = *out[0];
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += a[i * K + k] * b[k * N + j];
        c.values[i * N + j] = RoundToDType(acc, c.dtype);
      }
    }
  };
  return op;
}

OperatorDef MakeBatchMatmulOp() {
  OperatorDef op;
  op.name = "batch_matmul";
  op.summary = "C[B,M,N] = A[B,M,K] * B[B,K,N], one matmul per batch";
  op.params = {
      {"B", ParamKind::kDim, std::nullopt, "batch size"},
      {"M", ParamKind::kDim, std::nullopt, "rows of A and C"},
      {"N", ParamKind::kDim, std::nullopt, "columns of B and C"},
      {"K", ParamKind::kDim, std::nullopt, "reduction length"},
      DTypeParam(),
  };
  op.build = [](const OpParams& p) -> absl::StatusOr<OpTensors> {
    const int64_t Bt = p["B"], M = p["M"], N = p["N"], K = p["K"];
    te::Tensor a = te::Placeholder("A", {Bt, M, K}, p.dtype);
    te::Tensor b = te::Placeholder("B", {Bt, K, N}, p.dtype);
    te::ReduceAxis k = te::MakeReduceAxis(K, "k");
    te::Tensor c = te::ComputeReduction(
        "C", {Bt, M, N}, {"b", "i", "j"}, [&](const std::vector<Expr>& ax) {
          return te::Sum(a({ax[0], ax[1], k.var}) * b({ax[0], k.var, ax[2]}),
                         {k});
        });
    return OpTensors{{a, b}, {c}};
  };
  op.reference = [](const OpParams& p, const std::vector<const TensorData*>& in,
                    const std::vector<TensorData*>& out) {
    const int64_t Bt = p["B"], M = p["M"], N = p["N"], K = p["K"];
    const std::vector<double>& a = in[0]->values;
    const std::vector<double>& b = in[1]->values;
    TensorData& c = *out[0];
    for (int64_t bi = 0; bi < Bt; ++bi) {
      for (int64_t i = 0; i < M; ++i) {
        for (int64_t j = 0; j < N; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < K; ++k) {
            acc += a[(bi * M + i) * K + k] * b[(bi * K + k) * N + j];
          }
          c.values[(bi * M + i) * N + j] = RoundToDType(acc, c.dtype);
        }
      }
    }
  };
  return op;
}

// Bias and relu are further stages of the same workload, so that the search
// can fuse them into the matmul's loop nest.
OperatorDef MakeDenseOp() {
  OperatorDef op;
  op.name = "dense";
  op.summary = "Y[M,N] = X[M,K] * W[N,K]^T (+ bias[N]) (then relu)";
  op.params = {
      {"M", ParamKind::kDim, std::nullopt, "rows of X and Y (batch)"},
      {"N", ParamKind::kDim, std::nullopt, "rows of W, columns of Y (units)"},
      {"K", ParamKind::kDim, std::nullopt, "reduction length (features)"},
      {"bias", ParamKind::kFlag, "0", "1: add bias[N] to every row"},
      {"relu", ParamKind::kFlag, "0", "1: apply max(y, 0) at the end"},
      DTypeParam(),
  };
  op.build = [](const OpParams& p) -> absl::StatusOr<OpTensors> {
    const int64_t M = p["M"], N = p["N"], K = p["K"];
    const bool has_bias = p["bias"] != 0, has_relu = p["relu"] != 0;
    te::Tensor x = te::Placeholder("X", {M, K}, p.dtype);
    te::Tensor w = te::Placeholder("W", {N, K}, p.dtype);
    OpTensors t{{x, w}, {}};
    te::Tensor bias;
    if (has_bias) {
      bias = te::Placeholder("bias", {N}, p.dtype);
      t.inputs.push_back(bias);
    }
    // The last stage is always named Y; earlier ones by what they compute.
    const bool matmul_is_last = !has_bias && !has_relu;
    te::ReduceAxis k = te::MakeReduceAxis(K, "k");
    te::Tensor y = te::ComputeReduction(
        matmul_is_last ? "Y" : "dense", {M, N}, {"i", "j"},
        [&](const std::vector<Expr>& ax) {
          return te::Sum(x({ax[0], k.var}) * w({ax[1], k.var}), {k});
        });
    if (has_bias) {
      te::Tensor prev = y;
      y = te::Compute(has_relu ? "bias_add" : "Y", {M, N}, {"i", "j"},
                      [&](const std::vector<Expr>& ax) {
                        return prev({ax[0], ax[1]}) + bias({ax[1]});
                      });
    }
    if (has_relu) {
      te::Tensor prev = y;
      y = te::Compute("Y", {M, N}, {"i", "j"},
                      [&](const std::vector<Expr>& ax) {
                        return Max(prev({ax[0], ax[1]}), Zero(p.dtype));
                      });
    }
    t.outputs.push_back(y);
    return t;
  };
  op.reference = [](const OpParams& p, const std::vector<const TensorData*>& in,
                    const std::vector<TensorData*>& out) {
    const int64_t M = p["M"], N = p["N"], K = p["K"];
    const bool has_bias = p["bias"] != 0, has_relu = p["relu"] != 0;
    const std::vector<double>& x = in[0]->values;
    const std::vector<double>& w = in[1]->values;
    TensorData& y = *out[0];
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += x[i * K + k] * w[j * K + k];
        if (has_bias) acc += in[2]->values[j];
        if (has_relu && acc < 0) acc = 0;
        y.values[i * N + j] = RoundToDType(acc, y.dtype);
      }
    }
  };
  return op;
}

}  // namespace lathe::ops
