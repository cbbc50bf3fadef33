// LayerNormalization (opset 17): X normalized over the axes from `axis` to
// the last, then scaled and shifted (Scale, optional B, broadcast to those
// axes). The optional Mean and InvStdDev outputs have X's shape with the
// normalized axes of extent 1.
//
// Kernel form: sum, centre, sum of squares, normalize (four statements); a
// kernel of its own that may absorb a following elementwise chain. Only Y
// is computed there: a node whose Mean or InvStdDev is read is a host step.
#include <cmath>

#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<TensorType>> InferLayerNorm(const Graph& graph,
                                                       const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 2, 3));
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (HasInput(node, i)) LATHE_RETURN_IF_ERROR(CheckFloat(graph, node, i));
  }
  const std::vector<int64_t>& x = InputType(graph, node, 0).shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank == 0) return NodeError(node, "scalar input");
  LATHE_ASSIGN_OR_RETURN(int64_t axis,
                         NormalizeAxis(node, IntAttr(node, "axis", -1), rank));
  std::vector<int64_t> inner(x.begin() + axis, x.end());
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    if (!HasInput(node, i)) continue;
    LATHE_ASSIGN_OR_RETURN(
        std::vector<int64_t> b,
        BroadcastShapes(node, {InputType(graph, node, i).shape, inner}));
    if (b != inner) {
      return NodeError(node, absl::StrCat("input ", i,
                                          " does not broadcast to the "
                                          "normalized axes"));
    }
  }
  std::vector<int64_t> stat = x;
  for (int64_t a = axis; a < rank; ++a) stat[a] = 1;
  std::vector<TensorType> types = {InputType(graph, node, 0)};
  types.push_back(TensorType{DType::Float32(), stat});
  types.push_back(TensorType{DType::Float32(), stat});
  return types;
}

absl::StatusOr<std::vector<TensorData>> EvalLayerNorm(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  LATHE_ASSIGN_OR_RETURN(int64_t axis,
                         NormalizeAxis(node, IntAttr(node, "axis", -1), rank));
  const double epsilon = FloatAttr(node, "epsilon", 1e-5);
  std::vector<int64_t> inner_shape(x.shape.begin() + axis, x.shape.end());
  const int64_t inner = NumElements(inner_shape);
  const int64_t outer = inner == 0 ? 0 : NumElements(x.shape) / inner;
  std::vector<int64_t> scale_off = BroadcastOffsets(in[1]->shape, inner_shape);
  std::vector<int64_t> bias_off;
  const TensorData* bias = in.size() > 2 ? in[2] : nullptr;
  if (bias != nullptr) bias_off = BroadcastOffsets(bias->shape, inner_shape);
  std::vector<int64_t> stat_shape = x.shape;
  for (int64_t a = axis; a < rank; ++a) stat_shape[a] = 1;
  TensorData y(DType::Float32(), x.shape);
  TensorData mean_out(DType::Float32(), stat_shape);
  TensorData inv_out(DType::Float32(), stat_shape);
  for (int64_t o = 0; o < outer; ++o) {
    double mean = 0;
    for (int64_t i = 0; i < inner; ++i) mean += x.values[o * inner + i];
    mean /= static_cast<double>(inner);
    double var = 0;
    for (int64_t i = 0; i < inner; ++i) {
      const double c = x.values[o * inner + i] - mean;
      var += c * c;
    }
    var /= static_cast<double>(inner);
    const double inv = 1.0 / std::sqrt(var + epsilon);
    for (int64_t i = 0; i < inner; ++i) {
      double v =
          (x.values[o * inner + i] - mean) * inv * in[1]->values[scale_off[i]];
      if (bias != nullptr) v += bias->values[bias_off[i]];
      y.values[o * inner + i] = v;
    }
    mean_out.values[o] = mean;
    inv_out.values[o] = inv;
  }
  RoundValues(y);
  RoundValues(mean_out);
  RoundValues(inv_out);
  return std::vector<TensorData>{std::move(y), std::move(mean_out),
                                 std::move(inv_out)};
}

absl::Status EmitLayerNorm(const Node& node, KernelEmitter& e) {
  const std::vector<int64_t>& shape = e.output_type().shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  LATHE_ASSIGN_OR_RETURN(int64_t axis,
                         NormalizeAxis(node, IntAttr(node, "axis", -1), rank));
  std::vector<int64_t> outer(shape.begin(), shape.begin() + axis);
  std::vector<int64_t> inner(shape.begin() + axis, shape.end());
  const int64_t count = NumElements(inner);
  // Reads of a per-row statistic at the outer part of `vars`.
  auto outer_of = [&](const std::vector<std::string>& vars) {
    std::vector<std::string> o(vars.begin(), vars.begin() + axis);
    if (o.empty()) o.push_back("0");
    return o;
  };
  // A reduction statement over the inner axes: LHS vars, full index.
  auto reduction = [&](std::vector<std::string>* lhs,
                       std::vector<std::string>* full) {
    *lhs = e.NewVars(outer);
    *full = outer.empty() ? std::vector<std::string>{} : *lhs;
    for (int64_t extent : inner) full->push_back(e.NewVar(extent));
  };
  // 1. The sum.
  const std::string sum = e.NewTensor();
  std::vector<std::string> lhs, full;
  reduction(&lhs, &full);
  LATHE_ASSIGN_OR_RETURN(std::string x1, e.Read(0, full));
  e.Add(sum, lhs, "+=", x1);
  // 2. The centred values.
  const std::string centred = e.NewTensor();
  std::vector<std::string> v = e.NewVars(shape);
  LATHE_ASSIGN_OR_RETURN(std::string x2, e.Read(0, v));
  e.Add(centred, v, "=",
        absl::StrCat(x2, " - ", KernelEmitter::ReadTensor(sum, outer_of(v)),
                     " / ", count));
  // 3. The sum of squares.
  const std::string squares = e.NewTensor();
  reduction(&lhs, &full);
  const std::string c = KernelEmitter::ReadTensor(centred, full);
  e.Add(squares, lhs, "+=", absl::StrCat(c, " * ", c));
  // 4. Normalize, scale, shift.
  std::vector<std::string> u = e.NewVars(shape);
  std::vector<std::string> u_inner(u.begin() + axis, u.end());
  LATHE_ASSIGN_OR_RETURN(std::string scale, e.ReadBroadcast(1, u_inner, inner));
  std::string text = absl::StrCat(
      KernelEmitter::ReadTensor(centred, u), " / sqrt(",
      KernelEmitter::ReadTensor(squares, outer_of(u)), " / ", count, " + ",
      KernelEmitter::Literal(FloatAttr(node, "epsilon", 1e-5)), ") * ", scale);
  if (e.has_input(2)) {
    LATHE_ASSIGN_OR_RETURN(std::string bias,
                           e.ReadBroadcast(2, u_inner, inner));
    text = absl::StrCat(text, " + ", bias);
  }
  e.Add(e.output_name(), u, "=", text);
  return absl::OkStatus();
}

}  // namespace

std::vector<OpDef> LayerNormOps() {
  return {{"LayerNormalization", FusionRole::kOwnKernel, InferLayerNorm,
           EvalLayerNorm, EmitLayerNorm}};
}

}  // namespace lathe::graph
