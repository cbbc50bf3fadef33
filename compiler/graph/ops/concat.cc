// Concat: inputs joined along `axis` (negative counted from the end).
//
// Kernel form: each output element is the sum of every input's zero-padded
// read shifted by its offset along the axis (exactly one read is inside).
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<int64_t>> ConcatShape(
    const Node& node, const std::vector<std::vector<int64_t>>& shapes,
    int64_t* axis_out) {
  const std::vector<int64_t>& first = shapes[0];
  const int64_t rank = static_cast<int64_t>(first.size());
  if (rank == 0) return NodeError(node, "scalar inputs");
  LATHE_ASSIGN_OR_RETURN(int64_t axis,
                         NormalizeAxis(node, IntAttr(node, "axis", 0), rank));
  std::vector<int64_t> out = first;
  out[axis] = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (static_cast<int64_t>(shapes[i].size()) != rank) {
      return NodeError(node,
                       absl::StrCat("input ", i, " has rank ", shapes[i].size(),
                                    ", input 0 ", rank));
    }
    for (int64_t a = 0; a < rank; ++a) {
      if (a != axis && shapes[i][a] != first[a]) {
        return NodeError(node,
                         absl::StrCat("input ", i, " has extent ", shapes[i][a],
                                      " on axis ", a, ", input 0 ", first[a]));
      }
    }
    out[axis] += shapes[i][axis];
  }
  *axis_out = axis;
  return out;
}

absl::StatusOr<std::vector<TensorType>> InferConcat(const Graph& graph,
                                                    const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 1, 1 << 16));
  LATHE_RETURN_IF_ERROR(CheckSameDType(graph, node));
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    shapes.push_back(InputType(graph, node, i).shape);
  }
  int64_t axis = 0;
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                         ConcatShape(node, shapes, &axis));
  return std::vector<TensorType>{
      TensorType{InputType(graph, node, 0).dtype, shape}};
}

absl::StatusOr<std::vector<TensorData>> EvalConcat(
    const Node& node, const std::vector<const TensorData*>& in) {
  std::vector<std::vector<int64_t>> shapes;
  for (const TensorData* t : in) shapes.push_back(t->shape);
  int64_t axis = 0;
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                         ConcatShape(node, shapes, &axis));
  TensorData y(in[0]->dtype, shape);
  const int64_t outer =
      NumElements(std::vector<int64_t>(shape.begin(), shape.begin() + axis));
  size_t flat = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const TensorData* t : in) {
      const int64_t chunk = Strides(t->shape)[axis] * t->shape[axis];
      for (int64_t e = 0; e < chunk; ++e) {
        y.values[flat++] = t->values[o * chunk + e];
      }
    }
  }
  return std::vector<TensorData>{std::move(y)};
}

absl::Status EmitConcat(const Node& node, KernelEmitter& e) {
  const std::vector<int64_t>& shape = e.output_type().shape;
  const int64_t axis_attr = IntAttr(node, "axis", 0);
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
  std::vector<std::string> vars = e.NewVars(shape);
  std::string text;
  int64_t offset = 0;
  for (size_t i = 0; i < e.num_inputs(); ++i) {
    const int64_t extent = e.input(i).type.shape[axis];
    if (extent == 0) continue;
    std::vector<std::string> index = vars;
    index[axis] = KernelEmitter::Affine({{1, vars[axis]}}, -offset);
    const bool whole = e.num_inputs() == 1;
    LATHE_ASSIGN_OR_RETURN(std::string read, e.Read(i, index, !whole));
    text = text.empty() ? read : absl::StrCat(text, " + ", read);
    offset += extent;
  }
  e.Add(e.output_name(), vars, "=", text);
  return absl::OkStatus();
}

}  // namespace

std::vector<OpDef> ConcatOps() {
  return {
      {"Concat", FusionRole::kOwnKernel, InferConcat, EvalConcat, EmitConcat}};
}

}  // namespace lathe::graph
