// Expand: the input broadcast (numpy rules, both ways) with the shape in
// input 1, which must be a constant.
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<TensorType>> InferExpand(const Graph& graph,
                                                    const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 2, 2));
  const TensorData* shape = ConstantInput(graph, node, 1);
  if (shape == nullptr) {
    return NodeError(node, "shape (input 1) must be a constant");
  }
  const TensorType& x = InputType(graph, node, 0);
  LATHE_ASSIGN_OR_RETURN(
      std::vector<int64_t> out,
      BroadcastShapes(node, {x.shape, ConstantInts(*shape)}));
  return std::vector<TensorType>{TensorType{x.dtype, out}};
}

absl::StatusOr<std::vector<TensorData>> EvalExpand(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  LATHE_ASSIGN_OR_RETURN(
      std::vector<int64_t> out,
      BroadcastShapes(node, {x.shape, ConstantInts(*in[1])}));
  TensorData y(x.dtype, out);
  std::vector<int64_t> offsets = BroadcastOffsets(x.shape, out);
  for (size_t e = 0; e < y.values.size(); ++e) {
    y.values[e] = x.values[offsets[e]];
  }
  return std::vector<TensorData>{std::move(y)};
}

absl::Status EmitExpand(const Node&, KernelEmitter& e) {
  const std::vector<int64_t>& shape = e.output_type().shape;
  std::vector<std::string> vars = e.NewVars(shape);
  LATHE_ASSIGN_OR_RETURN(std::string read, e.ReadBroadcast(0, vars, shape));
  e.Add(e.output_name(), vars, "=", read);
  return absl::OkStatus();
}

}  // namespace

std::vector<OpDef> ExpandOps() {
  return {{"Expand", FusionRole::kElementwise, InferExpand, EvalExpand,
           EmitExpand}};
}

}  // namespace lathe::graph
