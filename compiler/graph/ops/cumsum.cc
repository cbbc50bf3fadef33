// CumSum: running sums along the axis in input 1 (a constant scalar),
// exclusive and reverse as attributes. Host evaluation only.
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<TensorType>> InferCumSum(const Graph& graph,
                                                    const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 2, 2));
  const TensorType& x = InputType(graph, node, 0);
  if (x.dtype.is_bool() || x.shape.empty()) {
    return NodeError(node, "input must be a numeric tensor of rank 1 or more");
  }
  if (InputType(graph, node, 1).NumElements() != 1) {
    return NodeError(node, "axis (input 1) must be a scalar");
  }
  return std::vector<TensorType>{x};
}

absl::StatusOr<std::vector<TensorData>> EvalCumSum(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  LATHE_ASSIGN_OR_RETURN(int64_t axis,
                         NormalizeAxis(node, ConstantInts(*in[1]).at(0), rank));
  const bool exclusive = IntAttr(node, "exclusive", 0) != 0;
  const bool reverse = IntAttr(node, "reverse", 0) != 0;
  const int64_t extent = x.shape[axis];
  const int64_t inner = Strides(x.shape)[axis];
  const int64_t outer = extent == 0 ? 0 : x.size() / (extent * inner);
  TensorData y(x.dtype, x.shape);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double sum = 0;
      for (int64_t s = 0; s < extent; ++s) {
        const int64_t k = reverse ? extent - 1 - s : s;
        const int64_t at = (o * extent + k) * inner + i;
        if (exclusive) {
          y.values[at] = sum;
          sum += x.values[at];
        } else {
          sum += x.values[at];
          y.values[at] = sum;
        }
      }
    }
  }
  RoundValues(y);
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

std::vector<OpDef> CumSumOps() {
  return {{"CumSum", FusionRole::kHost, InferCumSum, EvalCumSum, nullptr}};
}

}  // namespace lathe::graph
