// DepthToSpace (modes DCR and CRD) and SpaceToDepth with `blocksize`, on
// NCHW tensors. Host evaluation only.
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<int64_t>> OutShape(const Node& node,
                                              const std::vector<int64_t>& x) {
  const int64_t b = IntAttr(node, "blocksize", 0);
  if (x.size() != 4 || b <= 0) {
    return NodeError(node, "needs a 4-D input and a positive blocksize");
  }
  if (node.op == "DepthToSpace") {
    if (x[1] % (b * b) != 0) {
      return NodeError(node, "channels not divisible by blocksize^2");
    }
    const std::string mode = StringAttr(node, "mode", "DCR");
    if (mode != "DCR" && mode != "CRD")
      return UnsupportedAttr(node, "mode", mode);
    return std::vector<int64_t>{x[0], x[1] / (b * b), x[2] * b, x[3] * b};
  }
  if (x[2] % b != 0 || x[3] % b != 0) {
    return NodeError(node, "height or width not divisible by blocksize");
  }
  return std::vector<int64_t>{x[0], x[1] * b * b, x[2] / b, x[3] / b};
}

absl::StatusOr<std::vector<TensorType>> InferDepthToSpace(const Graph& graph,
                                                          const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 1, 1));
  const TensorType& x = InputType(graph, node, 0);
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> shape, OutShape(node, x.shape));
  return std::vector<TensorType>{TensorType{x.dtype, shape}};
}

absl::StatusOr<std::vector<TensorData>> EvalDepthToSpace(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> shape, OutShape(node, x.shape));
  const int64_t b = IntAttr(node, "blocksize", 0);
  const bool crd = StringAttr(node, "mode", "DCR") == "CRD";
  TensorData y(x.dtype, shape);
  const std::vector<int64_t> xs = Strides(x.shape);
  size_t flat = 0;
  ForEachIndex(shape, [&](const std::vector<int64_t>& i) {
    const int64_t n = i[0], c = i[1], h = i[2], w = i[3];
    int64_t xc = 0, xh = 0, xw = 0;
    if (node.op == "DepthToSpace") {
      const int64_t bh = h % b, bw = w % b;
      xc = crd ? c * b * b + bh * b + bw : (bh * b + bw) * shape[1] + c;
      xh = h / b;
      xw = w / b;
    } else {
      const int64_t cin = x.shape[1];
      const int64_t block = c / cin;
      xc = c % cin;
      xh = h * b + block / b;
      xw = w * b + block % b;
    }
    y.values[flat++] = x.values[n * xs[0] + xc * xs[1] + xh * xs[2] + xw];
  });
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

std::vector<OpDef> DepthToSpaceOps() {
  return {{"DepthToSpace", FusionRole::kHost, InferDepthToSpace,
           EvalDepthToSpace, nullptr},
          {"SpaceToDepth", FusionRole::kHost, InferDepthToSpace,
           EvalDepthToSpace, nullptr}};
}

}  // namespace lathe::graph
