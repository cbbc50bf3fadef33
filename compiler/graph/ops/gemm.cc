// Gemm: Y = alpha * op(A) * op(B) + beta * C, op a transpose where transA /
// transB say so, C optional and broadcast to [M, N].
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
};

absl::StatusOr<GemmShape> Geometry(const Node& node,
                                   const std::vector<int64_t>& a,
                                   const std::vector<int64_t>& b) {
  if (a.size() != 2 || b.size() != 2) {
    return NodeError(node, "A and B must be matrices");
  }
  GemmShape s;
  s.trans_a = IntAttr(node, "transA", 0) != 0;
  s.trans_b = IntAttr(node, "transB", 0) != 0;
  s.m = s.trans_a ? a[1] : a[0];
  s.k = s.trans_a ? a[0] : a[1];
  const int64_t kb = s.trans_b ? b[1] : b[0];
  s.n = s.trans_b ? b[0] : b[1];
  if (kb != s.k) {
    return NodeError(node,
                     absl::StrCat("inner extents differ: ", s.k, " and ", kb));
  }
  return s;
}

absl::StatusOr<std::vector<TensorType>> InferGemm(const Graph& graph,
                                                  const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 2, 3));
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (HasInput(node, i)) LATHE_RETURN_IF_ERROR(CheckFloat(graph, node, i));
  }
  LATHE_ASSIGN_OR_RETURN(GemmShape s,
                         Geometry(node, InputType(graph, node, 0).shape,
                                  InputType(graph, node, 1).shape));
  if (HasInput(node, 2)) {
    LATHE_ASSIGN_OR_RETURN(
        std::vector<int64_t> shape,
        BroadcastShapes(node, {InputType(graph, node, 2).shape, {s.m, s.n}}));
    if (shape != std::vector<int64_t>{s.m, s.n}) {
      return NodeError(node, "C does not broadcast to [M, N]");
    }
  }
  return std::vector<TensorType>{TensorType{DType::Float32(), {s.m, s.n}}};
}

absl::StatusOr<std::vector<TensorData>> EvalGemm(
    const Node& node, const std::vector<const TensorData*>& in) {
  LATHE_ASSIGN_OR_RETURN(GemmShape s,
                         Geometry(node, in[0]->shape, in[1]->shape));
  const double alpha = FloatAttr(node, "alpha", 1.0);
  const double beta = FloatAttr(node, "beta", 1.0);
  TensorData y(DType::Float32(), {s.m, s.n});
  std::vector<int64_t> c_offsets;
  const TensorData* c = in.size() > 2 ? in[2] : nullptr;
  if (c != nullptr) c_offsets = BroadcastOffsets(c->shape, {s.m, s.n});
  const std::vector<double>& a = in[0]->values;
  const std::vector<double>& b = in[1]->values;
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < s.k; ++k) {
        acc += a[s.trans_a ? k * s.m + i : i * s.k + k] *
               b[s.trans_b ? j * s.k + k : k * s.n + j];
      }
      double v = alpha * acc;
      if (c != nullptr) v += beta * c->values[c_offsets[i * s.n + j]];
      y.values[i * s.n + j] = v;
    }
  }
  RoundValues(y);
  return std::vector<TensorData>{std::move(y)};
}

absl::Status EmitGemm(const Node& node, KernelEmitter& e) {
  LATHE_ASSIGN_OR_RETURN(GemmShape s, Geometry(node, e.input(0).type.shape,
                                               e.input(1).type.shape));
  const double alpha = FloatAttr(node, "alpha", 1.0);
  const double beta = FloatAttr(node, "beta", 1.0);
  const bool has_c = e.has_input(2) && beta != 0;
  std::vector<std::string> v = e.NewVars({s.m, s.n});
  std::string k = e.NewVar(s.k);
  LATHE_ASSIGN_OR_RETURN(
      std::string a, e.Read(0, s.trans_a ? std::vector<std::string>{k, v[0]}
                                         : std::vector<std::string>{v[0], k}));
  LATHE_ASSIGN_OR_RETURN(
      std::string b, e.Read(1, s.trans_b ? std::vector<std::string>{v[1], k}
                                         : std::vector<std::string>{k, v[1]}));
  const std::string product = absl::StrCat(a, " * ", b);
  if (!has_c && alpha == 1.0) {
    e.Add(e.output_name(), v, "+=", product);
    return absl::OkStatus();
  }
  const std::string acc = e.NewTensor();
  e.Add(acc, v, "+=", product);
  std::vector<std::string> w = e.NewVars({s.m, s.n});
  std::string text = KernelEmitter::ReadTensor(acc, w);
  if (alpha != 1.0)
    text = absl::StrCat(KernelEmitter::Literal(alpha), " * ", text);
  if (has_c) {
    LATHE_ASSIGN_OR_RETURN(std::string c, e.ReadBroadcast(2, w, {s.m, s.n}));
    if (beta != 1.0) c = absl::StrCat(KernelEmitter::Literal(beta), " * ", c);
    text = absl::StrCat(text, " + ", c);
  }
  e.Add(e.output_name(), w, "=", text);
  return absl::OkStatus();
}

}  // namespace

std::vector<OpDef> GemmOps() {
  return {{"Gemm", FusionRole::kAnchor, InferGemm, EvalGemm, EmitGemm}};
}

}  // namespace lathe::graph
