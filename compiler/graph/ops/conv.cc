// Conv: N-D convolution (NC + spatial) with groups (depthwise included),
// strides, dilations, asymmetric pads, auto_pad and an optional bias.
//
// Kernel form: a `+=` statement over (channel in group, kernel offsets)
// reading the input zero-padded, then the bias add. Groups other than 1 and
// depthwise (group == C == M) compute on a view of the output split into
// [N, group, M/group, spatial...] (the same bytes); nothing may then follow
// the conv inside its kernel.
#include "compiler/graph/ops/op_definition.h"
#include "compiler/graph/ops/window.h"

namespace lathe::graph {
namespace {

struct ConvShape {
  int64_t n = 0, c = 0, m = 0, group = 1;
  std::vector<int64_t> in;  // input spatial extents
  Window window;
};

absl::StatusOr<ConvShape> ConvGeometry(const Node& node,
                                       const std::vector<int64_t>& x,
                                       const std::vector<int64_t>& w) {
  if (x.size() < 3 || w.size() != x.size()) {
    return NodeError(node,
                     absl::StrCat("input rank ", x.size(), " and weight rank ",
                                  w.size(), " must match and be at least 3"));
  }
  ConvShape s;
  s.n = x[0];
  s.c = x[1];
  s.m = w[0];
  s.group = IntAttr(node, "group", 1);
  if (s.group <= 0 || s.c % s.group != 0 || s.m % s.group != 0 ||
      w[1] * s.group != s.c) {
    return NodeError(node, absl::StrCat("group ", s.group, " does not fit ",
                                        s.c, " input channels, weight ",
                                        TensorTypeText({DType::Float32(), w})));
  }
  s.in.assign(x.begin() + 2, x.end());
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  std::vector<int64_t> attr_kernel = IntsAttr(node, "kernel_shape", kernel);
  if (!attr_kernel.empty() && attr_kernel != kernel) {
    return NodeError(node, "kernel_shape differs from the weight's shape");
  }
  LATHE_ASSIGN_OR_RETURN(s.window, ComputeWindow(node, s.in, kernel, false));
  return s;
}

absl::StatusOr<std::vector<TensorType>> InferConv(const Graph& graph,
                                                  const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 2, 3));
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (HasInput(node, i)) LATHE_RETURN_IF_ERROR(CheckFloat(graph, node, i));
  }
  const std::vector<int64_t>& x = InputType(graph, node, 0).shape;
  const std::vector<int64_t>& w = InputType(graph, node, 1).shape;
  LATHE_ASSIGN_OR_RETURN(ConvShape s, ConvGeometry(node, x, w));
  if (HasInput(node, 2) &&
      InputType(graph, node, 2).shape != std::vector<int64_t>{s.m}) {
    return NodeError(node, absl::StrCat("bias must be [", s.m, "]"));
  }
  std::vector<int64_t> out = {s.n, s.m};
  out.insert(out.end(), s.window.out.begin(), s.window.out.end());
  return std::vector<TensorType>{TensorType{DType::Float32(), out}};
}

absl::StatusOr<std::vector<TensorData>> EvalConv(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  const TensorData& w = *in[1];
  const TensorData* b = in.size() > 2 ? in[2] : nullptr;
  LATHE_ASSIGN_OR_RETURN(ConvShape s, ConvGeometry(node, x.shape, w.shape));
  const size_t d = s.in.size();
  std::vector<int64_t> out_shape = {s.n, s.m};
  out_shape.insert(out_shape.end(), s.window.out.begin(), s.window.out.end());
  TensorData y(DType::Float32(), out_shape);
  const std::vector<int64_t> xs = Strides(x.shape);
  const std::vector<int64_t> ws = Strides(w.shape);
  const int64_t cg = s.c / s.group, mg = s.m / s.group;
  std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end());
  size_t flat = 0;
  ForEachIndex(out_shape, [&](const std::vector<int64_t>& o) {
    const int64_t n = o[0], m = o[1], g = m / mg;
    double acc = b != nullptr ? b->values[m] : 0.0;
    for (int64_t c = 0; c < cg; ++c) {
      ForEachIndex(kernel, [&](const std::vector<int64_t>& r) {
        int64_t xo = n * xs[0] + (g * cg + c) * xs[1];
        int64_t wo = m * ws[0] + c * ws[1];
        for (size_t a = 0; a < d; ++a) {
          const int64_t pos = o[2 + a] * s.window.strides[a] +
                              r[a] * s.window.dilations[a] -
                              s.window.pads_begin[a];
          if (pos < 0 || pos >= s.in[a]) return;
          xo += pos * xs[2 + a];
          wo += r[a] * ws[2 + a];
        }
        acc += x.values[xo] * w.values[wo];
      });
    }
    y.values[flat++] = acc;
  });
  RoundValues(y);
  return std::vector<TensorData>{std::move(y)};
}

absl::Status EmitConv(const Node& node, KernelEmitter& e) {
  const std::vector<int64_t>& x = e.input(0).type.shape;
  const std::vector<int64_t>& w = e.input(1).type.shape;
  LATHE_ASSIGN_OR_RETURN(ConvShape s, ConvGeometry(node, x, w));
  const size_t d = s.in.size();
  const bool depthwise = s.group == s.c && s.m == s.c && s.group > 1;
  const bool grouped = s.group > 1 && !depthwise;
  const int64_t cg = s.c / s.group, mg = s.m / s.group;
  // 1. Output variables: [n, m, o...] or [n, g, mm, o...].
  std::vector<int64_t> out_shape = {s.n};
  if (grouped) {
    out_shape.push_back(s.group);
    out_shape.push_back(mg);
  } else {
    out_shape.push_back(s.m);
  }
  out_shape.insert(out_shape.end(), s.window.out.begin(), s.window.out.end());
  std::vector<std::string> vars = e.NewVars(out_shape);
  const size_t first_spatial = grouped ? 3 : 2;
  // 2. Reduction variables: the channel in the group (unless depthwise) and
  //    the kernel offsets.
  std::string c = depthwise ? "" : e.NewVar(cg);
  std::vector<std::string> r;
  for (size_t a = 0; a < d; ++a) r.push_back(e.NewVar(s.window.kernel[a]));
  // 3. Reads.
  std::vector<std::string> xi = {vars[0]};
  std::vector<std::string> wi;
  if (grouped) {
    xi.push_back(KernelEmitter::Affine({{cg, vars[1]}, {1, c}}, 0));
    wi.push_back(KernelEmitter::Affine({{mg, vars[1]}, {1, vars[2]}}, 0));
    wi.push_back(c);
  } else if (depthwise) {
    xi.push_back(vars[1]);
    wi.push_back(vars[1]);
    wi.push_back("0");
  } else {
    xi.push_back(c);
    wi.push_back(vars[1]);
    wi.push_back(c);
  }
  for (size_t a = 0; a < d; ++a) {
    xi.push_back(
        KernelEmitter::Affine({{s.window.strides[a], vars[first_spatial + a]},
                               {s.window.dilations[a], r[a]}},
                              -s.window.pads_begin[a]));
    wi.push_back(r[a]);
  }
  LATHE_ASSIGN_OR_RETURN(std::string xr, e.Read(0, xi, s.window.padded()));
  LATHE_ASSIGN_OR_RETURN(std::string wr, e.Read(1, wi));
  if (!e.has_input(2)) {
    e.Add(e.output_name(), vars, "+=", absl::StrCat(xr, " * ", wr));
    return absl::OkStatus();
  }
  const std::string acc = e.NewTensor();
  e.Add(acc, vars, "+=", absl::StrCat(xr, " * ", wr));
  std::vector<std::string> vars2 = e.NewVars(out_shape);
  std::string channel =
      grouped ? KernelEmitter::Affine({{mg, vars2[1]}, {1, vars2[2]}}, 0)
              : vars2[1];
  LATHE_ASSIGN_OR_RETURN(std::string br, e.Read(2, {channel}));
  e.Add(e.output_name(), vars2, "=",
        absl::StrCat(KernelEmitter::ReadTensor(acc, vars2), " + ", br));
  return absl::OkStatus();
}

}  // namespace

// A grouped conv's kernel output is a view in another shape: it ends its
// kernel (see the file comment).
bool ConvEndsKernel(const Graph& graph, const Node& node) {
  if (node.op != "Conv") return false;
  const int64_t group = IntAttr(node, "group", 1);
  const std::vector<int64_t>& x = InputType(graph, node, 0).shape;
  const std::vector<int64_t>& w = InputType(graph, node, 1).shape;
  if (group <= 1 || x.size() < 2 || w.empty()) return false;
  return !(group == x[1] && w[0] == x[1]);
}

std::vector<OpDef> ConvOps() {
  return {{"Conv", FusionRole::kAnchor, InferConv, EvalConv, EmitConv}};
}

}  // namespace lathe::graph
