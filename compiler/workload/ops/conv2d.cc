// conv2d_nchw and conv2d_nhwc: grouped, strided, padded, dilated 2-d
// convolutions (depthwise is groups=C).
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/workload/ops/ops.h"
#include "compiler/workload/ops/window.h"

namespace lathe::ops {
namespace {

std::vector<ParamSpec> ConvParams() {
  return {
      {"N", ParamKind::kDim, std::nullopt, "batch size"},
      {"C", ParamKind::kDim, std::nullopt, "input channels"},
      {"H", ParamKind::kDim, std::nullopt, "input height"},
      {"W", ParamKind::kDim, std::nullopt, "input width"},
      {"K", ParamKind::kDim, std::nullopt, "output channels"},
      {"R", ParamKind::kDim, std::nullopt, "kernel height"},
      {"S", ParamKind::kDim, std::nullopt, "kernel width"},
      {"stride", ParamKind::kDim, "1", "step of the window, both axes"},
      {"pad", ParamKind::kNonNegative, "0", "zero padding on every side"},
      {"dilation", ParamKind::kDim, "1", "spacing of kernel taps, both axes"},
      {"groups", ParamKind::kDim, "1",
       "channel groups; must divide C and K (depthwise: groups=C)"},
      DTypeParam(),
  };
}

// The shape facts both layouts share, validated.
struct ConvShape {
  int64_t N, C, H, W, K, R, S, stride, pad, dilation, groups;
  int64_t P = 0, Q = 0;    // output height and width
  int64_t Cg = 0, Kg = 0;  // channels per group, in and out
};

ConvShape ConvShapeOf(const OpParams& p) {
  ConvShape s{p["N"], p["C"],      p["H"],   p["W"],        p["K"],     p["R"],
              p["S"], p["stride"], p["pad"], p["dilation"], p["groups"]};
  s.Cg = s.C / s.groups;
  s.Kg = s.K / s.groups;
  return s;
}

absl::StatusOr<ConvShape> CheckConv(const std::string& op, const OpParams& p) {
  ConvShape s = ConvShapeOf(p);
  if (s.C % s.groups != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": groups=", s.groups, " does not divide C=", s.C,
                     "; groups must divide both C and K"));
  }
  if (s.K % s.groups != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": groups=", s.groups, " does not divide K=", s.K,
                     "; groups must divide both C and K"));
  }
  absl::StatusOr<int64_t> P =
      WindowOutputLength(op, {"H", "R", s.H, s.R, s.stride, s.pad, s.dilation});
  if (!P.ok()) return P.status();
  absl::StatusOr<int64_t> Q =
      WindowOutputLength(op, {"W", "S", s.W, s.S, s.stride, s.pad, s.dilation});
  if (!Q.ok()) return Q.status();
  s.P = *P;
  s.Q = *Q;
  return s;
}

// The input channel that output channel k reads at in-group channel c.
Expr InputChannel(const ConvShape& s, const Expr& k, const Expr& c) {
  if (s.groups == 1) return c;  // keeps the common case's indices plain
  return FloorDiv(k, Expr(s.Kg)) * Expr(s.Cg) + c;
}

}  // namespace

OperatorDef MakeConv2dNchwOp() {
  OperatorDef op;
  op.name = "conv2d_nchw";
  op.summary = "Y[N,K,P,Q] = conv(X[N,C,H,W], W[K,C/groups,R,S])";
  op.params = ConvParams();
  op.build = [](const OpParams& p) -> absl::StatusOr<OpTensors> {
    absl::StatusOr<ConvShape> checked = CheckConv("conv2d_nchw", p);
    if (!checked.ok()) return checked.status();
    const ConvShape s = *checked;
    te::Tensor x = te::Placeholder("X", {s.N, s.C, s.H, s.W}, p.dtype);
    te::Tensor w = te::Placeholder("W", {s.K, s.Cg, s.R, s.S}, p.dtype);
    te::Tensor xp = s.pad > 0 ? PadSpatial(x, 2, 3, s.pad, Zero(p.dtype),
                                           {"n", "c", "h", "w"})
                              : x;
    te::ReduceAxis c = te::MakeReduceAxis(s.Cg, "c");
    te::ReduceAxis r = te::MakeReduceAxis(s.R, "r");
    te::ReduceAxis q = te::MakeReduceAxis(s.S, "s");
    te::Tensor y = te::ComputeReduction(
        "Y", {s.N, s.K, s.P, s.Q}, {"n", "k", "p", "q"},
        [&](const std::vector<Expr>& ax) {
          Expr h = ax[2] * Expr(s.stride) + r.var * Expr(s.dilation);
          Expr wi = ax[3] * Expr(s.stride) + q.var * Expr(s.dilation);
          return te::Sum(xp({ax[0], InputChannel(s, ax[1], c.var), h, wi}) *
                             w({ax[1], c.var, r.var, q.var}),
                         {c, r, q});
        });
    return OpTensors{{x, w}, {y}};
  };
  op.reference = [](const OpParams& p, const std::vector<const TensorData*>& in,
                    const std::vector<TensorData*>& out) {
    const ConvShape s = *CheckConv("conv2d_nchw", p);
    const std::vector<double>& x = in[0]->values;
    const std::vector<double>& w = in[1]->values;
    TensorData& y = *out[0];
    for (int64_t n = 0; n < s.N; ++n)
      for (int64_t k = 0; k < s.K; ++k)
        for (int64_t oh = 0; oh < s.P; ++oh)
          for (int64_t ow = 0; ow < s.Q; ++ow) {
            double acc = 0;
            const int64_t group = k / s.Kg;
            for (int64_t c = 0; c < s.Cg; ++c)
              for (int64_t r = 0; r < s.R; ++r)
                for (int64_t t = 0; t < s.S; ++t) {
                  const int64_t h = oh * s.stride - s.pad + r * s.dilation;
                  const int64_t wi = ow * s.stride - s.pad + t * s.dilation;
                  if (h < 0 || h >= s.H || wi < 0 || wi >= s.W) continue;
                  const int64_t ci = group * s.Cg + c;
                  acc += x[((n * s.C + ci) * s.H + h) * s.W + wi] *
                         w[((k * s.Cg + c) * s.R + r) * s.S + t];
                }
            y.values[((n * s.K + k) * s.P + oh) * s.Q + ow] =
                RoundToDType(acc, y.dtype);
          }
  };
  return op;
}

OperatorDef MakeConv2dNhwcOp() {
  OperatorDef op;
  op.name = "conv2d_nhwc";
  op.summary = "Y[N,P,Q,K] = conv(X[N,H,W,C], W[R,S,C/groups,K])";
  op.params = ConvParams();
  op.build = [](const OpParams& p) -> absl::StatusOr<OpTensors> {
    absl::StatusOr<ConvShape> checked = CheckConv("conv2d_nhwc", p);
    if (!checked.ok()) return checked.status();
    const ConvShape s = *checked;
    te::Tensor x = te::Placeholder("X", {s.N, s.H, s.W, s.C}, p.dtype);
    te::Tensor w = te::Placeholder("W", {s.R, s.S, s.Cg, s.K}, p.dtype);
    te::Tensor xp = s.pad > 0 ? PadSpatial(x, 1, 2, s.pad, Zero(p.dtype),
                                           {"n", "h", "w", "c"})
                              : x;
    te::ReduceAxis r = te::MakeReduceAxis(s.R, "r");
    te::ReduceAxis q = te::MakeReduceAxis(s.S, "s");
    te::ReduceAxis c = te::MakeReduceAxis(s.Cg, "c");
    te::Tensor y = te::ComputeReduction(
        "Y", {s.N, s.P, s.Q, s.K}, {"n", "p", "q", "k"},
        [&](const std::vector<Expr>& ax) {
          Expr h = ax[1] * Expr(s.stride) + r.var * Expr(s.dilation);
          Expr wi = ax[2] * Expr(s.stride) + q.var * Expr(s.dilation);
          return te::Sum(xp({ax[0], h, wi, InputChannel(s, ax[3], c.var)}) *
                             w({r.var, q.var, c.var, ax[3]}),
                         {r, q, c});
        });
    return OpTensors{{x, w}, {y}};
  };
  op.reference = [](const OpParams& p, const std::vector<const TensorData*>& in,
                    const std::vector<TensorData*>& out) {
    const ConvShape s = *CheckConv("conv2d_nhwc", p);
    const std::vector<double>& x = in[0]->values;
    const std::vector<double>& w = in[1]->values;
    TensorData& y = *out[0];
    for (int64_t n = 0; n < s.N; ++n)
      for (int64_t oh = 0; oh < s.P; ++oh)
        for (int64_t ow = 0; ow < s.Q; ++ow)
          for (int64_t k = 0; k < s.K; ++k) {
            double acc = 0;
            const int64_t group = k / s.Kg;
            for (int64_t r = 0; r < s.R; ++r)
              for (int64_t t = 0; t < s.S; ++t)
                for (int64_t c = 0; c < s.Cg; ++c) {
                  const int64_t h = oh * s.stride - s.pad + r * s.dilation;
                  const int64_t wi = ow * s.stride - s.pad + t * s.dilation;
                  if (h < 0 || h >= s.H || wi < 0 || wi >= s.W) continue;
                  const int64_t ci = group * s.Cg + c;
                  acc += x[((n * s.H + h) * s.W + wi) * s.C + ci] *
                         w[((r * s.S + t) * s.Cg + c) * s.K + k];
                }
            y.values[((n * s.P + oh) * s.Q + ow) * s.K + k] =
                RoundToDType(acc, y.dtype);
          }
  };
  return op;
}

}  // namespace lathe::ops
