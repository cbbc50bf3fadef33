// ConvTranspose: the transpose (gradient) of Conv, N-D, with strides,
// dilations, pads, output_padding, output_shape, auto_pad and groups.
//
// Kernel form (group 1, dilation 1): a sum over input positions with
// zero-padded weight reads, Y[n,m,h] += X[n,c,i] * W?[c,m,h+pad-stride*i],
// then the bias add.
#include <algorithm>

#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

struct TransposeShape {
  int64_t n = 0, c = 0, m = 0, group = 1;
  std::vector<int64_t> in, kernel, strides, dilations, pads_begin, out;
};

absl::StatusOr<TransposeShape> Geometry(const Node& node,
                                        const std::vector<int64_t>& x,
                                        const std::vector<int64_t>& w) {
  if (x.size() < 3 || w.size() != x.size()) {
    return NodeError(node,
                     absl::StrCat("input rank ", x.size(), " and weight rank ",
                                  w.size(), " must match and be at least 3"));
  }
  TransposeShape s;
  const size_t d = x.size() - 2;
  s.n = x[0];
  s.c = x[1];
  s.group = IntAttr(node, "group", 1);
  if (s.group <= 0 || w[0] != s.c || s.c % s.group != 0) {
    return NodeError(node, "weight and group do not fit the input channels");
  }
  s.m = w[1] * s.group;
  s.in.assign(x.begin() + 2, x.end());
  s.kernel.assign(w.begin() + 2, w.end());
  s.strides = IntsAttr(node, "strides", {});
  s.dilations = IntsAttr(node, "dilations", {});
  if (s.strides.empty()) s.strides.assign(d, 1);
  if (s.dilations.empty()) s.dilations.assign(d, 1);
  std::vector<int64_t> pads = IntsAttr(node, "pads", {});
  if (pads.empty()) pads.assign(2 * d, 0);
  std::vector<int64_t> output_padding = IntsAttr(node, "output_padding", {});
  if (output_padding.empty()) output_padding.assign(d, 0);
  std::vector<int64_t> output_shape = IntsAttr(node, "output_shape", {});
  const std::string auto_pad = StringAttr(node, "auto_pad", "NOTSET");
  if (s.strides.size() != d || s.dilations.size() != d ||
      pads.size() != 2 * d || output_padding.size() != d ||
      (!output_shape.empty() && output_shape.size() != d)) {
    return NodeError(node,
                     "strides, dilations, pads, output_padding or "
                     "output_shape do not match the spatial rank");
  }
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER") {
    return UnsupportedAttr(node, "auto_pad", auto_pad);
  }
  for (size_t a = 0; a < d; ++a) {
    if (s.strides[a] <= 0 || s.dilations[a] <= 0 || pads[a] < 0 ||
        pads[a + d] < 0) {
      return NodeError(node,
                       "strides and dilations must be positive, pads "
                       "not negative");
    }
    const int64_t full = s.strides[a] * (s.in[a] - 1) + output_padding[a] +
                         (s.kernel[a] - 1) * s.dilations[a] + 1;
    int64_t begin = pads[a], end = pads[a + d];
    int64_t out = 0;
    if (!output_shape.empty() || auto_pad == "SAME_UPPER" ||
        auto_pad == "SAME_LOWER") {
      out = output_shape.empty() ? s.in[a] * s.strides[a] : output_shape[a];
      const int64_t total = std::max<int64_t>(0, full - out);
      if (auto_pad == "SAME_UPPER") {
        begin = total / 2;
      } else {
        begin = total - total / 2;
      }
      end = total - begin;
    } else {
      if (auto_pad == "VALID") begin = end = 0;
      out = full - begin - end;
    }
    if (out <= 0) return NodeError(node, "empty output");
    s.pads_begin.push_back(begin);
    s.out.push_back(out);
  }
  return s;
}

absl::StatusOr<std::vector<TensorType>> InferConvTranspose(const Graph& graph,
                                                           const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 2, 3));
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (HasInput(node, i)) LATHE_RETURN_IF_ERROR(CheckFloat(graph, node, i));
  }
  LATHE_ASSIGN_OR_RETURN(TransposeShape s,
                         Geometry(node, InputType(graph, node, 0).shape,
                                  InputType(graph, node, 1).shape));
  if (HasInput(node, 2) &&
      InputType(graph, node, 2).shape != std::vector<int64_t>{s.m}) {
    return NodeError(node, absl::StrCat("bias must be [", s.m, "]"));
  }
  std::vector<int64_t> out = {s.n, s.m};
  out.insert(out.end(), s.out.begin(), s.out.end());
  return std::vector<TensorType>{TensorType{DType::Float32(), out}};
}

absl::StatusOr<std::vector<TensorData>> EvalConvTranspose(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  const TensorData& w = *in[1];
  const TensorData* b = in.size() > 2 ? in[2] : nullptr;
  LATHE_ASSIGN_OR_RETURN(TransposeShape s, Geometry(node, x.shape, w.shape));
  const size_t d = s.in.size();
  std::vector<int64_t> out_shape = {s.n, s.m};
  out_shape.insert(out_shape.end(), s.out.begin(), s.out.end());
  TensorData y(DType::Float32(), out_shape);
  const std::vector<int64_t> ys = Strides(out_shape);
  const std::vector<int64_t> ws = Strides(w.shape);
  const int64_t cg = s.c / s.group, mg = s.m / s.group;
  size_t flat = 0;
  ForEachIndex(x.shape, [&](const std::vector<int64_t>& xi) {
    const double xv = x.values[flat++];
    const int64_t n = xi[0], c = xi[1], g = c / cg;
    for (int64_t mm = 0; mm < mg; ++mm) {
      ForEachIndex(s.kernel, [&](const std::vector<int64_t>& r) {
        int64_t yo = n * ys[0] + (g * mg + mm) * ys[1];
        int64_t wo = c * ws[0] + mm * ws[1];
        for (size_t a = 0; a < d; ++a) {
          const int64_t pos = xi[2 + a] * s.strides[a] + r[a] * s.dilations[a] -
                              s.pads_begin[a];
          if (pos < 0 || pos >= s.out[a]) return;
          yo += pos * ys[2 + a];
          wo += r[a] * ws[2 + a];
        }
        y.values[yo] += xv * w.values[wo];
      });
    }
  });
  if (b != nullptr) {
    const int64_t inner = NumElements(s.out);
    for (size_t e = 0; e < y.values.size(); ++e) {
      y.values[e] += b->values[(static_cast<int64_t>(e) / inner) % s.m];
    }
  }
  RoundValues(y);
  return std::vector<TensorData>{std::move(y)};
}

absl::Status EmitConvTranspose(const Node& node, KernelEmitter& e) {
  LATHE_ASSIGN_OR_RETURN(TransposeShape s, Geometry(node, e.input(0).type.shape,
                                                    e.input(1).type.shape));
  if (s.group != 1) return NoKernel(node, "group above 1");
  for (int64_t dil : s.dilations) {
    if (dil != 1) return NoKernel(node, "dilation above 1");
  }
  const size_t d = s.in.size();
  std::vector<int64_t> out_shape = {s.n, s.m};
  out_shape.insert(out_shape.end(), s.out.begin(), s.out.end());
  std::vector<std::string> vars = e.NewVars(out_shape);
  std::string c = e.NewVar(s.c);
  std::vector<std::string> xi = {vars[0], c};
  std::vector<std::string> wi = {c, vars[1]};
  for (size_t a = 0; a < d; ++a) {
    std::string i = e.NewVar(s.in[a]);
    xi.push_back(i);
    wi.push_back(KernelEmitter::Affine({{1, vars[2 + a]}, {-s.strides[a], i}},
                                       s.pads_begin[a]));
  }
  LATHE_ASSIGN_OR_RETURN(std::string xr, e.Read(0, xi));
  LATHE_ASSIGN_OR_RETURN(std::string wr, e.Read(1, wi, /*padded=*/true));
  if (!e.has_input(2)) {
    e.Add(e.output_name(), vars, "+=", absl::StrCat(xr, " * ", wr));
    return absl::OkStatus();
  }
  const std::string acc = e.NewTensor();
  e.Add(acc, vars, "+=", absl::StrCat(xr, " * ", wr));
  std::vector<std::string> vars2 = e.NewVars(out_shape);
  LATHE_ASSIGN_OR_RETURN(std::string br, e.Read(2, {vars2[1]}));
  e.Add(e.output_name(), vars2, "=",
        absl::StrCat(KernelEmitter::ReadTensor(acc, vars2), " + ", br));
  return absl::OkStatus();
}

}  // namespace

std::vector<OpDef> ConvTransposeOps() {
  return {{"ConvTranspose", FusionRole::kAnchor, InferConvTranspose,
           EvalConvTranspose, EmitConvTranspose}};
}

}  // namespace lathe::graph
