// Trilu: the upper (upper=1) or lower triangle of the last two axes, the
// diagonal shifted by k (optional scalar input 1), the rest zero. Host
// evaluation only.
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<TensorType>> InferTrilu(const Graph& graph,
                                                   const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 1, 2));
  const TensorType& x = InputType(graph, node, 0);
  if (x.shape.size() < 2) return NodeError(node, "input rank below 2");
  if (HasInput(node, 1) && InputType(graph, node, 1).NumElements() != 1) {
    return NodeError(node, "k (input 1) must be a scalar");
  }
  return std::vector<TensorType>{x};
}

absl::StatusOr<std::vector<TensorData>> EvalTrilu(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  const int64_t k =
      in.size() > 1 && in[1] != nullptr ? ConstantInts(*in[1]).at(0) : 0;
  const bool upper = IntAttr(node, "upper", 1) != 0;
  const int64_t rows = x.shape[x.shape.size() - 2];
  const int64_t cols = x.shape.back();
  TensorData y = x;
  for (size_t e = 0; e < y.values.size(); ++e) {
    const int64_t j = static_cast<int64_t>(e) % cols;
    const int64_t i = (static_cast<int64_t>(e) / cols) % rows;
    const bool keep = upper ? j - i >= k : j - i <= k;
    if (!keep) y.values[e] = 0;
  }
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

std::vector<OpDef> TriluOps() {
  return {{"Trilu", FusionRole::kHost, InferTrilu, EvalTrilu, nullptr}};
}

}  // namespace lathe::graph
