// OneHot (indices, a constant scalar depth, values [off, on]; axis) and
// EyeLike (ones on the diagonal shifted by k, dtype as an ONNX code or the
// input's). Host evaluation only.
#include <algorithm>

#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<TensorType>> InferOneHot(const Graph& graph,
                                                    const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 3, 3));
  const TensorData* depth = ConstantInput(graph, node, 1);
  if (depth == nullptr || depth->values.size() != 1) {
    return absl::UnimplementedError(absl::StrCat(
        "node ", node.name,
        " (OneHot): depth (input 1) is not a constant scalar; a OneHot whose "
        "depth is known only at run time is not supported"));
  }
  const int64_t d = ConstantInts(*depth)[0];
  if (d <= 0) return NodeError(node, "depth must be positive");
  if (InputType(graph, node, 2).NumElements() != 2) {
    return NodeError(node, "values (input 2) must hold two elements");
  }
  std::vector<int64_t> shape = InputType(graph, node, 0).shape;
  const int64_t rank = static_cast<int64_t>(shape.size()) + 1;
  LATHE_ASSIGN_OR_RETURN(int64_t axis,
                         NormalizeAxis(node, IntAttr(node, "axis", -1), rank));
  shape.insert(shape.begin() + axis, d);
  return std::vector<TensorType>{
      TensorType{InputType(graph, node, 2).dtype, shape}};
}

absl::StatusOr<std::vector<TensorData>> EvalOneHot(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& indices = *in[0];
  const int64_t depth = ConstantInts(*in[1]).at(0);
  const double off = in[2]->values.at(0), on = in[2]->values.at(1);
  const int64_t rank = static_cast<int64_t>(indices.shape.size()) + 1;
  LATHE_ASSIGN_OR_RETURN(int64_t axis,
                         NormalizeAxis(node, IntAttr(node, "axis", -1), rank));
  std::vector<int64_t> shape = indices.shape;
  shape.insert(shape.begin() + axis, depth);
  TensorData y(in[2]->dtype, shape);
  std::fill(y.values.begin(), y.values.end(), off);
  const int64_t inner =
      NumElements(std::vector<int64_t>(shape.begin() + axis + 1, shape.end()));
  const std::vector<int64_t> picks = ConstantInts(indices);
  for (int64_t e = 0; e < indices.size(); ++e) {
    int64_t p = picks[e];
    if (p < 0) p += depth;
    if (p < 0 || p >= depth) continue;
    const int64_t outer = e / inner, i = e % inner;
    y.values[(outer * depth + p) * inner + i] = on;
  }
  return std::vector<TensorData>{std::move(y)};
}

absl::StatusOr<DType> EyeDType(const Node& node, DType input) {
  if (!node.Has("dtype")) return input;
  return DataTypeAttr(node, "dtype", 1);
}

absl::StatusOr<std::vector<TensorType>> InferEyeLike(const Graph& graph,
                                                     const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 1, 1));
  const TensorType& x = InputType(graph, node, 0);
  if (x.shape.size() != 2) return NodeError(node, "input must be 2-D");
  LATHE_ASSIGN_OR_RETURN(DType dtype, EyeDType(node, x.dtype));
  return std::vector<TensorType>{TensorType{dtype, x.shape}};
}

absl::StatusOr<std::vector<TensorData>> EvalEyeLike(
    const Node& node, const std::vector<const TensorData*>& in) {
  LATHE_ASSIGN_OR_RETURN(DType dtype, EyeDType(node, in[0]->dtype));
  const int64_t k = IntAttr(node, "k", 0);
  TensorData y(dtype, in[0]->shape);
  const int64_t cols = y.shape[1];
  for (int64_t e = 0; e < y.size(); ++e) {
    if (e % cols - e / cols == k) y.values[e] = 1;
  }
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

std::vector<OpDef> OneHotOps() {
  return {{"OneHot", FusionRole::kHost, InferOneHot, EvalOneHot, nullptr},
          {"EyeLike", FusionRole::kHost, InferEyeLike, EvalEyeLike, nullptr}};
}

}  // namespace lathe::graph
