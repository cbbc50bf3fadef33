// Hardmax: 1 at the first largest element along `axis` (opset 13), 0
// elsewhere. Host evaluation only.
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<TensorType>> InferHardmax(const Graph& graph,
                                                     const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 1, 1));
  const TensorType& x = InputType(graph, node, 0);
  if (!x.dtype.is_float()) return NodeError(node, "input must be float");
  LATHE_RETURN_IF_ERROR(NormalizeAxis(node, IntAttr(node, "axis", -1),
                                      static_cast<int64_t>(x.shape.size()))
                            .status());
  return std::vector<TensorType>{x};
}

absl::StatusOr<std::vector<TensorData>> EvalHardmax(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  LATHE_ASSIGN_OR_RETURN(int64_t axis,
                         NormalizeAxis(node, IntAttr(node, "axis", -1),
                                       static_cast<int64_t>(x.shape.size())));
  const int64_t extent = x.shape[axis];
  const int64_t inner = Strides(x.shape)[axis];
  const int64_t outer = extent == 0 ? 0 : x.size() / (extent * inner);
  TensorData y(x.dtype, x.shape);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t k = 1; k < extent; ++k) {
        if (x.values[(o * extent + k) * inner + i] >
            x.values[(o * extent + best) * inner + i]) {
          best = k;
        }
      }
      y.values[(o * extent + best) * inner + i] = 1;
    }
  }
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

std::vector<OpDef> HardmaxOps() {
  return {{"Hardmax", FusionRole::kHost, InferHardmax, EvalHardmax, nullptr}};
}

}  // namespace lathe::graph
