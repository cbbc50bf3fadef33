// Mod: the remainder of a broadcast division. With fmod=0 (integers only)
// it takes the divisor's sign, as Python's %; with fmod=1 the dividend's,
// as C's fmod. Host evaluation only.
#include <cmath>

#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<TensorType>> InferMod(const Graph& graph,
                                                 const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 2, 2));
  LATHE_RETURN_IF_ERROR(CheckSameDType(graph, node));
  const DType dtype = InputType(graph, node, 0).dtype;
  if (dtype.is_bool()) return NodeError(node, "bool inputs");
  if (dtype.is_float() && IntAttr(node, "fmod", 0) == 0) {
    return UnsupportedAttr(node, "fmod", "0 with float inputs");
  }
  LATHE_ASSIGN_OR_RETURN(
      std::vector<int64_t> shape,
      BroadcastShapes(node, {InputType(graph, node, 0).shape,
                             InputType(graph, node, 1).shape}));
  return std::vector<TensorType>{TensorType{dtype, shape}};
}

absl::StatusOr<std::vector<TensorData>> EvalMod(
    const Node& node, const std::vector<const TensorData*>& in) {
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                         BroadcastShapes(node, {in[0]->shape, in[1]->shape}));
  const bool c_style = IntAttr(node, "fmod", 0) != 0;
  TensorData y(in[0]->dtype, shape);
  std::vector<int64_t> a = BroadcastOffsets(in[0]->shape, shape);
  std::vector<int64_t> b = BroadcastOffsets(in[1]->shape, shape);
  for (size_t e = 0; e < y.values.size(); ++e) {
    const double x = in[0]->values[a[e]], d = in[1]->values[b[e]];
    if (d == 0) {
      y.values[e] = in[0]->dtype.is_float() ? std::nan("") : 0.0;
      continue;
    }
    double r = std::fmod(x, d);
    if (!c_style && r != 0 && ((r < 0) != (d < 0))) r += d;
    y.values[e] = r;
  }
  RoundValues(y);
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

std::vector<OpDef> ModOps() {
  return {{"Mod", FusionRole::kHost, InferMod, EvalMod, nullptr}};
}

}  // namespace lathe::graph
