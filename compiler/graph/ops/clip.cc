// Clip: the input clamped to [min, max] (optional scalar inputs, opset 13+).
#include <algorithm>
#include <limits>

#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<TensorType>> InferClip(const Graph& graph,
                                                  const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 1, 3));
  LATHE_RETURN_IF_ERROR(CheckSameDType(graph, node));
  const TensorType& in = InputType(graph, node, 0);
  if (in.dtype.is_bool()) return NodeError(node, "bool input");
  for (size_t i = 1; i < 3; ++i) {
    if (HasInput(node, i) && !InputType(graph, node, i).shape.empty() &&
        InputType(graph, node, i).NumElements() != 1) {
      return NodeError(node, absl::StrCat("input ", i, " must be a scalar"));
    }
  }
  return std::vector<TensorType>{in};
}

absl::StatusOr<std::vector<TensorData>> EvalClip(
    const Node& node, const std::vector<const TensorData*>& in) {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  if (in.size() > 1 && in[1] != nullptr) {
    if (in[1]->values.size() != 1) return NodeError(node, "min not a scalar");
    lo = in[1]->values[0];
  }
  if (in.size() > 2 && in[2] != nullptr) {
    if (in[2]->values.size() != 1) return NodeError(node, "max not a scalar");
    hi = in[2]->values[0];
  }
  TensorData out = *in[0];
  for (double& v : out.values) v = std::min(std::max(v, lo), hi);
  return std::vector<TensorData>{std::move(out)};
}

absl::Status EmitClip(const Node&, KernelEmitter& e) {
  const std::vector<int64_t>& shape = e.output_type().shape;
  std::vector<std::string> vars = e.NewVars(shape);
  LATHE_ASSIGN_OR_RETURN(std::string text, e.ReadBroadcast(0, vars, shape));
  if (e.has_input(1)) {
    LATHE_ASSIGN_OR_RETURN(std::string lo, e.Read(1, {"0"}));
    text = absl::StrCat("max(", text, ", ", lo, ")");
  }
  if (e.has_input(2)) {
    LATHE_ASSIGN_OR_RETURN(std::string hi, e.Read(2, {"0"}));
    text = absl::StrCat("min(", text, ", ", hi, ")");
  }
  e.Add(e.output_name(), vars, "=", text);
  return absl::OkStatus();
}

}  // namespace

std::vector<OpDef> ClipOps() {
  return {{"Clip", FusionRole::kElementwise, InferClip, EvalClip, EmitClip}};
}

}  // namespace lathe::graph
