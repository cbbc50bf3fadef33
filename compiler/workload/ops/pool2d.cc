// max_pool2d and avg_pool2d over NCHW; average pooling divides by the number
// of input elements in the window (padding excluded).
#include <algorithm>
#include <limits>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/workload/ops/ops.h"
#include "compiler/workload/ops/window.h"

namespace lathe::ops {
namespace {

std::vector<ParamSpec> PoolParams() {
  return {
      {"N", ParamKind::kDim, std::nullopt, "batch size"},
      {"C", ParamKind::kDim, std::nullopt, "channels"},
      {"H", ParamKind::kDim, std::nullopt, "input height"},
      {"W", ParamKind::kDim, std::nullopt, "input width"},
      {"R", ParamKind::kDim, std::nullopt, "window height"},
      {"S", ParamKind::kDim, std::nullopt, "window width"},
      {"stride", ParamKind::kDim, "1", "step of the window, both axes"},
      {"pad", ParamKind::kNonNegative, "0",
       "padding on every side, smaller than R and S"},
      DTypeParam(),
  };
}

struct PoolShape {
  int64_t N, C, H, W, R, S, stride, pad;
  int64_t P = 0, Q = 0;
};

absl::StatusOr<PoolShape> CheckPool(const std::string& op, const OpParams& p) {
  PoolShape s{p["N"], p["C"], p["H"],      p["W"],
              p["R"], p["S"], p["stride"], p["pad"]};
  // A window lying entirely in the padding would have no element to take the
  // maximum or the average of.
  if (s.pad >= s.R || s.pad >= s.S) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": pad=", s.pad, " must be smaller than the window (R=", s.R,
        ", S=", s.S, ") so that every window covers an input element"));
  }
  absl::StatusOr<int64_t> P =
      WindowOutputLength(op, {"H", "R", s.H, s.R, s.stride, s.pad, 1});
  if (!P.ok()) return P.status();
  absl::StatusOr<int64_t> Q =
      WindowOutputLength(op, {"W", "S", s.W, s.S, s.stride, s.pad, 1});
  if (!Q.ok()) return Q.status();
  s.P = *P;
  s.Q = *Q;
  return s;
}

// The number of input elements (not padding) along one axis of the window
// that starts at out*stride - pad.
Expr CoveredLength(const Expr& out, int64_t stride, int64_t pad, int64_t window,
                   int64_t input) {
  Expr start = out * Expr(stride) - Expr(pad);
  return Min(start + Expr(window), Expr(input)) - Max(start, Expr(0));
}

// Both pooling references: visit the window's input elements (padding
// skipped) and reduce them with `combine` from `init`; `finish` gets the
// reduced value and the number of elements visited.
template <typename Combine, typename Finish>
void PoolReference(const PoolShape& s, const std::vector<double>& x,
                   TensorData& y, double init, Combine combine, Finish finish) {
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t c = 0; c < s.C; ++c)
      for (int64_t oh = 0; oh < s.P; ++oh)
        for (int64_t ow = 0; ow < s.Q; ++ow) {
          double acc = init;
          int64_t count = 0;
          for (int64_t r = 0; r < s.R; ++r)
            for (int64_t t = 0; t < s.S; ++t) {
              const int64_t h = oh * s.stride - s.pad + r;
              const int64_t w = ow * s.stride - s.pad + t;
              if (h < 0 || h >= s.H || w < 0 || w >= s.W) continue;
              acc = combine(acc, x[((n * s.C + c) * s.H + h) * s.W + w]);
              ++count;
            }
          y.values[((n * s.C + c) * s.P + oh) * s.Q + ow] =
              RoundToDType(finish(acc, count), y.dtype);
        }
}

}  // namespace

OperatorDef MakeMaxPool2dOp() {
  OperatorDef op;
  op.name = "max_pool2d";
  op.summary = "Y[N,C,P,Q] = max of X[N,C,H,W] over each RxS window";
  op.params = PoolParams();
  op.build = [](const OpParams& p) -> absl::StatusOr<OpTensors> {
    absl::StatusOr<PoolShape> checked = CheckPool("max_pool2d", p);
    if (!checked.ok()) return checked.status();
    const PoolShape s = *checked;
    te::Tensor x = te::Placeholder("X", {s.N, s.C, s.H, s.W}, p.dtype);
    te::Tensor xp = s.pad > 0 ? PadSpatial(x, 2, 3, s.pad, MinValue(p.dtype),
                                           {"n", "c", "h", "w"})
                              : x;
    te::ReduceAxis r = te::MakeReduceAxis(s.R, "r");
    te::ReduceAxis t = te::MakeReduceAxis(s.S, "s");
    te::Tensor y = te::ComputeReduction(
        "Y", {s.N, s.C, s.P, s.Q}, {"n", "c", "p", "q"},
        [&](const std::vector<Expr>& ax) {
          return te::MaxOver(xp({ax[0], ax[1], ax[2] * Expr(s.stride) + r.var,
                                 ax[3] * Expr(s.stride) + t.var}),
                             {r, t});
        });
    return OpTensors{{x}, {y}};
  };
  op.reference = [](const OpParams& p, const std::vector<const TensorData*>& in,
                    const std::vector<TensorData*>& out) {
    PoolReference(
        *CheckPool("max_pool2d", p), in[0]->values, *out[0],
        -std::numeric_limits<double>::infinity(),
        [](double acc, double v) { return std::max(acc, v); },
        [](double acc, int64_t) { return acc; });
  };
  return op;
}

OperatorDef MakeAvgPool2dOp() {
  OperatorDef op;
  op.name = "avg_pool2d";
  op.summary =
      "Y[N,C,P,Q] = mean of X[N,C,H,W] over each RxS window, padding excluded";
  op.params = PoolParams();
  op.build = [](const OpParams& p) -> absl::StatusOr<OpTensors> {
    absl::StatusOr<PoolShape> checked = CheckPool("avg_pool2d", p);
    if (!checked.ok()) return checked.status();
    const PoolShape s = *checked;
    te::Tensor x = te::Placeholder("X", {s.N, s.C, s.H, s.W}, p.dtype);
    te::Tensor xp = s.pad > 0 ? PadSpatial(x, 2, 3, s.pad, Zero(p.dtype),
                                           {"n", "c", "h", "w"})
                              : x;
    te::ReduceAxis r = te::MakeReduceAxis(s.R, "r");
    te::ReduceAxis t = te::MakeReduceAxis(s.S, "s");
    te::Tensor sum = te::ComputeReduction(
        "sum", {s.N, s.C, s.P, s.Q}, {"n", "c", "p", "q"},
        [&](const std::vector<Expr>& ax) {
          return te::Sum(xp({ax[0], ax[1], ax[2] * Expr(s.stride) + r.var,
                             ax[3] * Expr(s.stride) + t.var}),
                         {r, t});
        });
    te::Tensor y = te::Compute(
        "Y", {s.N, s.C, s.P, s.Q}, {"n", "c", "p", "q"},
        [&](const std::vector<Expr>& ax) {
          // Without padding every window is full: a constant divisor.
          Expr count =
              s.pad == 0 ? Expr(s.R * s.S)
                         : CoveredLength(ax[2], s.stride, s.pad, s.R, s.H) *
                               CoveredLength(ax[3], s.stride, s.pad, s.S, s.W);
          return sum({ax[0], ax[1], ax[2], ax[3]}) / Cast(p.dtype, count);
        });
    return OpTensors{{x}, {y}};
  };
  op.reference = [](const OpParams& p, const std::vector<const TensorData*>& in,
                    const std::vector<TensorData*>& out) {
    PoolReference(
        *CheckPool("avg_pool2d", p), in[0]->values, *out[0], 0.0,
        [](double acc, double v) { return acc + v; },
        [](double acc, int64_t count) {
          return acc / static_cast<double>(count);
        });
  };
  return op;
}

}  // namespace lathe::ops
