// The view operators, whose output is the input's elements in the same
// order under another shape (alias steps in execution): Reshape (0 copies a
// dim unless allowzero, -1 is inferred; the shape must be a constant),
// Flatten, Squeeze, Unsqueeze (axes as input 1, opset 13), Identity and
// Dropout in inference (its optional mask output is all true).
#include <algorithm>
#include <set>

#include "absl/strings/str_join.h"
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<int64_t>> ConstantAxes(const Graph& graph,
                                                  const Node& node, size_t i) {
  if (!HasInput(node, i)) return IntsAttr(node, "axes", {});
  const TensorData* axes = ConstantInput(graph, node, i);
  if (axes == nullptr) {
    return NodeError(
        node, absl::StrCat("input ", i, " (", graph.value(node.inputs[i]).name,
                           ") must be a constant"));
  }
  return ConstantInts(*axes);
}

absl::StatusOr<std::vector<int64_t>> ReshapeShape(
    const Node& node, const std::vector<int64_t>& in,
    const std::vector<int64_t>& requested) {
  const bool allowzero = IntAttr(node, "allowzero", 0) != 0;
  std::vector<int64_t> out;
  int64_t infer_at = -1, known = 1;
  for (size_t a = 0; a < requested.size(); ++a) {
    int64_t d = requested[a];
    if (d == 0 && !allowzero) {
      if (a >= in.size()) {
        return NodeError(
            node, absl::StrCat("shape copies dim ", a, " the input lacks"));
      }
      d = in[a];
    }
    if (d == -1) {
      if (infer_at >= 0) return NodeError(node, "shape has two -1 dims");
      infer_at = static_cast<int64_t>(a);
      out.push_back(1);
      continue;
    }
    if (d < 0) return NodeError(node, absl::StrCat("shape has dim ", d));
    known *= d;
    out.push_back(d);
  }
  const int64_t total = NumElements(in);
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0) {
      return NodeError(node, absl::StrCat("cannot infer -1 of shape [",
                                          absl::StrJoin(requested, ","),
                                          "] for ", total, " elements"));
    }
    out[infer_at] = total / known;
  } else if (known != total) {
    return NodeError(node,
                     absl::StrCat("shape [", absl::StrJoin(out, ","),
                                  "] does not hold ", total, " elements"));
  }
  return out;
}

// The output shape of a view node from its input shape and constant inputs.
absl::StatusOr<std::vector<int64_t>> ViewShape(
    const Node& node, const std::vector<int64_t>& in,
    const std::vector<int64_t>& axes_or_shape) {
  const int64_t rank = static_cast<int64_t>(in.size());
  if (node.op == "Reshape") return ReshapeShape(node, in, axes_or_shape);
  if (node.op == "Flatten") {
    int64_t axis = IntAttr(node, "axis", 1);
    if (axis < -rank || axis > rank) {
      return NodeError(node, absl::StrCat("axis ", axis, " out of range"));
    }
    if (axis < 0) axis += rank;
    std::vector<int64_t> outer(in.begin(), in.begin() + axis);
    std::vector<int64_t> inner(in.begin() + axis, in.end());
    return std::vector<int64_t>{NumElements(outer), NumElements(inner)};
  }
  if (node.op == "Squeeze") {
    std::set<int64_t> axes;
    for (int64_t a : axes_or_shape) {
      LATHE_ASSIGN_OR_RETURN(int64_t n, NormalizeAxis(node, a, rank));
      if (in[n] != 1) {
        return NodeError(node, absl::StrCat("axis ", a, " has extent ", in[n]));
      }
      axes.insert(n);
    }
    std::vector<int64_t> out;
    for (int64_t a = 0; a < rank; ++a) {
      const bool drop = axes_or_shape.empty() ? in[a] == 1 : axes.count(a) > 0;
      if (!drop) out.push_back(in[a]);
    }
    return out;
  }
  if (node.op == "Unsqueeze") {
    const int64_t out_rank = rank + static_cast<int64_t>(axes_or_shape.size());
    std::set<int64_t> axes;
    for (int64_t a : axes_or_shape) {
      LATHE_ASSIGN_OR_RETURN(int64_t n, NormalizeAxis(node, a, out_rank));
      if (!axes.insert(n).second) {
        return NodeError(node, absl::StrCat("axis ", a, " repeats"));
      }
    }
    std::vector<int64_t> out;
    size_t next = 0;
    for (int64_t a = 0; a < out_rank; ++a) {
      out.push_back(axes.count(a) ? 1 : in[next++]);
    }
    return out;
  }
  return in;  // Identity, Dropout
}

absl::StatusOr<std::vector<TensorType>> InferView(const Graph& graph,
                                                  const Node& node) {
  const bool takes_second =
      node.op == "Reshape" || node.op == "Squeeze" || node.op == "Unsqueeze";
  LATHE_RETURN_IF_ERROR(CheckInputCount(
      node, node.op == "Reshape" || node.op == "Unsqueeze" ? 2 : 1,
      node.op == "Dropout" ? 3
      : takes_second       ? 2
                           : 1));
  std::vector<int64_t> second;
  if (takes_second) {
    if (node.op == "Unsqueeze" && !HasInput(node, 1)) {
      return NodeError(node, "axes (input 1) is required");
    }
    LATHE_ASSIGN_OR_RETURN(second, ConstantAxes(graph, node, 1));
  }
  if (node.op == "Dropout" && HasInput(node, 2)) {
    const TensorData* training = ConstantInput(graph, node, 2);
    if (training == nullptr || training->values.at(0) != 0) {
      return UnsupportedAttr(node, "training_mode", "true");
    }
  }
  const TensorType& x = InputType(graph, node, 0);
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                         ViewShape(node, x.shape, second));
  std::vector<TensorType> types = {TensorType{x.dtype, shape}};
  if (node.op == "Dropout") types.push_back(TensorType{DType::Bool(), shape});
  return types;
}

absl::StatusOr<std::vector<TensorData>> EvalView(
    const Node& node, const std::vector<const TensorData*>& in) {
  std::vector<int64_t> second;
  const bool takes_second =
      node.op == "Reshape" || node.op == "Squeeze" || node.op == "Unsqueeze";
  if (takes_second && in.size() > 1 && in[1] != nullptr) {
    second = ConstantInts(*in[1]);
  } else if (node.op != "Reshape") {
    second = IntsAttr(node, "axes", {});
  }
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                         ViewShape(node, in[0]->shape, second));
  TensorData y = *in[0];
  y.shape = shape;
  std::vector<TensorData> out;
  out.push_back(std::move(y));
  if (node.op == "Dropout") {
    TensorData mask(DType::Bool(), shape);
    std::fill(mask.values.begin(), mask.values.end(), 1.0);
    out.push_back(std::move(mask));
  }
  return out;
}

}  // namespace

std::vector<OpDef> ViewOps() {
  std::vector<OpDef> defs;
  for (const char* op :
       {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"}) {
    defs.push_back({op, FusionRole::kView, InferView, EvalView, nullptr});
  }
  return defs;
}

}  // namespace lathe::graph
