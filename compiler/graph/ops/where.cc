// Where: X where the bool condition holds, else Y, all three broadcast. The
// condition is a bool tensor, so Where is a host step (or folded).
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<TensorType>> InferWhere(const Graph& graph,
                                                   const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 3, 3));
  if (!InputType(graph, node, 0).dtype.is_bool()) {
    return NodeError(node, "condition (input 0) must be bool");
  }
  if (InputType(graph, node, 1).dtype != InputType(graph, node, 2).dtype) {
    return NodeError(node, "inputs 1 and 2 differ in dtype");
  }
  LATHE_ASSIGN_OR_RETURN(
      std::vector<int64_t> shape,
      BroadcastShapes(node, {InputType(graph, node, 0).shape,
                             InputType(graph, node, 1).shape,
                             InputType(graph, node, 2).shape}));
  return std::vector<TensorType>{
      TensorType{InputType(graph, node, 1).dtype, shape}};
}

absl::StatusOr<std::vector<TensorData>> EvalWhere(
    const Node& node, const std::vector<const TensorData*>& in) {
  LATHE_ASSIGN_OR_RETURN(
      std::vector<int64_t> shape,
      BroadcastShapes(node, {in[0]->shape, in[1]->shape, in[2]->shape}));
  TensorData out(in[1]->dtype, shape);
  std::vector<int64_t> c = BroadcastOffsets(in[0]->shape, shape);
  std::vector<int64_t> x = BroadcastOffsets(in[1]->shape, shape);
  std::vector<int64_t> y = BroadcastOffsets(in[2]->shape, shape);
  for (size_t e = 0; e < out.values.size(); ++e) {
    out.values[e] =
        in[0]->values[c[e]] != 0 ? in[1]->values[x[e]] : in[2]->values[y[e]];
  }
  return std::vector<TensorData>{std::move(out)};
}

}  // namespace

std::vector<OpDef> WhereOps() {
  return {{"Where", FusionRole::kHost, InferWhere, EvalWhere, nullptr}};
}

}  // namespace lathe::graph
