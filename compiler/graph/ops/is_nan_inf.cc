// IsNaN and IsInf (detect_negative, detect_positive): bool masks of float
// inputs. Host evaluation only.
#include <cmath>

#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<TensorType>> InferIs(const Graph& graph,
                                                const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 1, 1));
  const TensorType& x = InputType(graph, node, 0);
  if (!x.dtype.is_float()) return NodeError(node, "input must be float");
  return std::vector<TensorType>{TensorType{DType::Bool(), x.shape}};
}

absl::StatusOr<std::vector<TensorData>> EvalIs(
    const Node& node, const std::vector<const TensorData*>& in) {
  const bool negative = IntAttr(node, "detect_negative", 1) != 0;
  const bool positive = IntAttr(node, "detect_positive", 1) != 0;
  TensorData y(DType::Bool(), in[0]->shape);
  for (size_t e = 0; e < y.values.size(); ++e) {
    const double v = in[0]->values[e];
    bool hit = false;
    if (node.op == "IsNaN") {
      hit = std::isnan(v);
    } else if (std::isinf(v)) {
      hit = v > 0 ? positive : negative;
    }
    y.values[e] = hit ? 1.0 : 0.0;
  }
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

std::vector<OpDef> IsNanInfOps() {
  return {{"IsNaN", FusionRole::kHost, InferIs, EvalIs, nullptr},
          {"IsInf", FusionRole::kHost, InferIs, EvalIs, nullptr}};
}

}  // namespace lathe::graph
