// Tile: the input repeated along each axis by the counts in input 1 (a
// constant). Host evaluation only.
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<int64_t>> TileShape(
    const Node& node, const std::vector<int64_t>& x,
    const std::vector<int64_t>& repeats) {
  if (repeats.size() != x.size()) {
    return NodeError(node, "repeats must have one count per axis");
  }
  std::vector<int64_t> out;
  for (size_t a = 0; a < x.size(); ++a) {
    if (repeats[a] < 0) return NodeError(node, "negative repeat");
    out.push_back(x[a] * repeats[a]);
  }
  return out;
}

absl::StatusOr<std::vector<TensorType>> InferTile(const Graph& graph,
                                                  const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 2, 2));
  const TensorData* repeats = ConstantInput(graph, node, 1);
  if (repeats == nullptr) {
    return NodeError(node, "repeats (input 1) must be a constant");
  }
  const TensorType& x = InputType(graph, node, 0);
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                         TileShape(node, x.shape, ConstantInts(*repeats)));
  return std::vector<TensorType>{TensorType{x.dtype, shape}};
}

absl::StatusOr<std::vector<TensorData>> EvalTile(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                         TileShape(node, x.shape, ConstantInts(*in[1])));
  TensorData y(x.dtype, shape);
  const std::vector<int64_t> xs = Strides(x.shape);
  const std::vector<int64_t> ys = Strides(shape);
  for (int64_t e = 0; e < y.size(); ++e) {
    int64_t o = 0;
    for (size_t a = 0; a < shape.size(); ++a) {
      o += ((e / ys[a]) % shape[a] % x.shape[a]) * xs[a];
    }
    y.values[e] = x.values[o];
  }
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

std::vector<OpDef> TileOps() {
  return {{"Tile", FusionRole::kHost, InferTile, EvalTile, nullptr}};
}

}  // namespace lathe::graph
