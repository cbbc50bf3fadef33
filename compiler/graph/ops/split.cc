// Split: the input cut along `axis` into pieces of the sizes in input 1 (a
// constant), or into as many equal pieces as there are outputs. A host step
// (fused groups have one output).
#include <algorithm>

#include "absl/strings/str_join.h"
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<int64_t>> Sizes(const Node& node,
                                           const std::vector<int64_t>& x,
                                           int64_t axis,
                                           const TensorData* split) {
  const int64_t extent = x[axis];
  const int64_t pieces = static_cast<int64_t>(node.outputs.size());
  std::vector<int64_t> sizes;
  if (split != nullptr) {
    sizes = ConstantInts(*split);
  } else if (!IntsAttr(node, "split", {}).empty()) {
    sizes = IntsAttr(node, "split", {});
  } else {
    if (pieces == 0) return NodeError(node, "no outputs");
    const int64_t each = (extent + pieces - 1) / pieces;
    for (int64_t p = 0; p < pieces; ++p) {
      sizes.push_back(std::max<int64_t>(0, std::min(each, extent - p * each)));
    }
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) return NodeError(node, "negative split size");
    total += s;
  }
  if (total != extent || static_cast<int64_t>(sizes.size()) != pieces) {
    return NodeError(node, absl::StrCat("split [", absl::StrJoin(sizes, ","),
                                        "] does not cut extent ", extent,
                                        " into ", pieces, " outputs"));
  }
  return sizes;
}

absl::StatusOr<std::vector<TensorType>> InferSplit(const Graph& graph,
                                                   const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 1, 2));
  const TensorType& x = InputType(graph, node, 0);
  LATHE_ASSIGN_OR_RETURN(int64_t axis,
                         NormalizeAxis(node, IntAttr(node, "axis", 0),
                                       static_cast<int64_t>(x.shape.size())));
  const TensorData* split = ConstantInput(graph, node, 1);
  if (HasInput(node, 1) && split == nullptr) {
    return NodeError(node, "split (input 1) must be a constant");
  }
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                         Sizes(node, x.shape, axis, split));
  std::vector<TensorType> types;
  for (int64_t s : sizes) {
    TensorType t = x;
    t.shape[axis] = s;
    types.push_back(t);
  }
  return types;
}

absl::StatusOr<std::vector<TensorData>> EvalSplit(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  LATHE_ASSIGN_OR_RETURN(int64_t axis,
                         NormalizeAxis(node, IntAttr(node, "axis", 0),
                                       static_cast<int64_t>(x.shape.size())));
  LATHE_ASSIGN_OR_RETURN(
      std::vector<int64_t> sizes,
      Sizes(node, x.shape, axis, in.size() > 1 ? in[1] : nullptr));
  const int64_t inner = Strides(x.shape)[axis];
  const int64_t outer = NumElements(
      std::vector<int64_t>(x.shape.begin(), x.shape.begin() + axis));
  std::vector<TensorData> out;
  int64_t offset = 0;
  for (int64_t s : sizes) {
    std::vector<int64_t> shape = x.shape;
    shape[axis] = s;
    TensorData y(x.dtype, shape);
    size_t flat = 0;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t e = 0; e < s * inner; ++e) {
        y.values[flat++] = x.values[(o * x.shape[axis] + offset) * inner + e];
      }
    }
    offset += s;
    out.push_back(std::move(y));
  }
  return out;
}

}  // namespace

std::vector<OpDef> SplitOps() {
  return {{"Split", FusionRole::kHost, InferSplit, EvalSplit, nullptr}};
}

}  // namespace lathe::graph
