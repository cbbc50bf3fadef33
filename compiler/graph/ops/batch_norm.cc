// BatchNormalization in inference mode: per channel (axis 1),
// Y = (X - mean) / sqrt(var + epsilon) * scale + B. Training mode is
// refused. passes/fold_batch_norm.h folds it into a preceding Conv.
#include <cmath>

#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<TensorType>> InferBatchNorm(const Graph& graph,
                                                       const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 5, 5));
  if (IntAttr(node, "training_mode", 0) != 0) {
    return UnsupportedAttr(node, "training_mode", "1");
  }
  if (node.outputs.size() > 1) {
    return UnsupportedAttr(node, "outputs running_mean/var", "present");
  }
  for (size_t i = 0; i < 5; ++i) {
    LATHE_RETURN_IF_ERROR(CheckFloat(graph, node, i));
  }
  const std::vector<int64_t>& x = InputType(graph, node, 0).shape;
  if (x.size() < 2) return NodeError(node, "input rank below 2");
  for (size_t i = 1; i < 5; ++i) {
    if (InputType(graph, node, i).shape != std::vector<int64_t>{x[1]}) {
      return NodeError(node,
                       absl::StrCat("input ", i, " must be [", x[1], "]"));
    }
  }
  return std::vector<TensorType>{InputType(graph, node, 0)};
}

absl::StatusOr<std::vector<TensorData>> EvalBatchNorm(
    const Node& node, const std::vector<const TensorData*>& in) {
  const double epsilon = FloatAttr(node, "epsilon", 1e-5);
  TensorData y = *in[0];
  const int64_t c = y.shape[1];
  const int64_t inner = NumElements(y.shape) / (y.shape[0] * c);
  for (size_t e = 0; e < y.values.size(); ++e) {
    const int64_t ch = (static_cast<int64_t>(e) / inner) % c;
    y.values[e] = (y.values[e] - in[3]->values[ch]) /
                      std::sqrt(in[4]->values[ch] + epsilon) *
                      in[1]->values[ch] +
                  in[2]->values[ch];
  }
  RoundValues(y);
  return std::vector<TensorData>{std::move(y)};
}

absl::Status EmitBatchNorm(const Node& node, KernelEmitter& e) {
  const std::vector<int64_t>& shape = e.output_type().shape;
  std::vector<std::string> vars = e.NewVars(shape);
  LATHE_ASSIGN_OR_RETURN(std::string x, e.Read(0, vars));
  std::vector<std::string> ch = {vars[1]};
  LATHE_ASSIGN_OR_RETURN(std::string scale, e.Read(1, ch));
  LATHE_ASSIGN_OR_RETURN(std::string bias, e.Read(2, ch));
  LATHE_ASSIGN_OR_RETURN(std::string mean, e.Read(3, ch));
  LATHE_ASSIGN_OR_RETURN(std::string var, e.Read(4, ch));
  e.Add(e.output_name(), vars, "=",
        absl::StrCat("(", x, " - ", mean, ") / sqrt(", var, " + ",
                     KernelEmitter::Literal(FloatAttr(node, "epsilon", 1e-5)),
                     ") * ", scale, " + ", bias));
  return absl::OkStatus();
}

}  // namespace

std::vector<OpDef> BatchNormOps() {
  return {{"BatchNormalization", FusionRole::kElementwise, InferBatchNorm,
           EvalBatchNorm, EmitBatchNorm}};
}

}  // namespace lathe::graph
