// ArgMax and ArgMin: the int64 index of the largest (smallest) element
// along `axis`, the first one unless select_last_index; keepdims. Host
// steps (int64 results).
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<TensorType>> InferArg(const Graph& graph,
                                                 const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 1, 1));
  const TensorType& x = InputType(graph, node, 0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank == 0) return NodeError(node, "scalar input");
  LATHE_ASSIGN_OR_RETURN(int64_t axis,
                         NormalizeAxis(node, IntAttr(node, "axis", 0), rank));
  if (x.shape[axis] == 0) return NodeError(node, "empty axis");
  std::vector<int64_t> out = x.shape;
  if (IntAttr(node, "keepdims", 1) != 0) {
    out[axis] = 1;
  } else {
    out.erase(out.begin() + axis);
  }
  return std::vector<TensorType>{TensorType{DType::Int64(), out}};
}

absl::StatusOr<std::vector<TensorData>> EvalArg(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  LATHE_ASSIGN_OR_RETURN(int64_t axis,
                         NormalizeAxis(node, IntAttr(node, "axis", 0), rank));
  const bool is_max = node.op == "ArgMax";
  const bool last = IntAttr(node, "select_last_index", 0) != 0;
  std::vector<int64_t> out_shape = x.shape;
  out_shape[axis] = 1;
  const int64_t extent = x.shape[axis];
  const int64_t inner = Strides(x.shape)[axis];
  const int64_t outer = NumElements(out_shape) / inner;
  TensorData y(DType::Int64(), out_shape);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      double best_value = x.values[o * extent * inner + i];
      for (int64_t k = 1; k < extent; ++k) {
        const double v = x.values[(o * extent + k) * inner + i];
        const bool better = is_max ? (last ? v >= best_value : v > best_value)
                                   : (last ? v <= best_value : v < best_value);
        if (better) {
          best = k;
          best_value = v;
        }
      }
      y.values[o * inner + i] = static_cast<double>(best);
    }
  }
  if (IntAttr(node, "keepdims", 1) == 0) y.shape.erase(y.shape.begin() + axis);
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

std::vector<OpDef> ArgReduceOps() {
  return {{"ArgMax", FusionRole::kHost, InferArg, EvalArg, nullptr},
          {"ArgMin", FusionRole::kHost, InferArg, EvalArg, nullptr}};
}

}  // namespace lathe::graph
