// Gather: slices of the data along `axis` picked by an int32/int64 index
// tensor (negative indices count from the end; out of range is an error).
// The output shape is data[:axis] + indices + data[axis+1:].
//
// Kernel form: only a constant scalar index (a fixed slice); otherwise a
// host step.
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<int64_t>> GatherShape(
    const Node& node, const std::vector<int64_t>& data,
    const std::vector<int64_t>& indices, int64_t* axis_out) {
  const int64_t rank = static_cast<int64_t>(data.size());
  if (rank == 0) return NodeError(node, "scalar data");
  LATHE_ASSIGN_OR_RETURN(int64_t axis,
                         NormalizeAxis(node, IntAttr(node, "axis", 0), rank));
  std::vector<int64_t> out(data.begin(), data.begin() + axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  *axis_out = axis;
  return out;
}

absl::StatusOr<std::vector<TensorType>> InferGather(const Graph& graph,
                                                    const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 2, 2));
  if (!InputType(graph, node, 1).dtype.is_int()) {
    return NodeError(node, "indices (input 1) must be int32 or int64");
  }
  int64_t axis = 0;
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                         GatherShape(node, InputType(graph, node, 0).shape,
                                     InputType(graph, node, 1).shape, &axis));
  return std::vector<TensorType>{
      TensorType{InputType(graph, node, 0).dtype, shape}};
}

absl::StatusOr<std::vector<TensorData>> EvalGather(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  int64_t axis = 0;
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                         GatherShape(node, x.shape, in[1]->shape, &axis));
  const int64_t extent = x.shape[axis];
  const int64_t inner = Strides(x.shape)[axis];
  const int64_t outer = NumElements(
      std::vector<int64_t>(x.shape.begin(), x.shape.begin() + axis));
  std::vector<int64_t> indices = ConstantInts(*in[1]);
  for (int64_t& i : indices) {
    if (i < -extent || i >= extent) {
      return NodeError(
          node,
          absl::StrCat("index ", i, " is out of range for extent ", extent));
    }
    if (i < 0) i += extent;
  }
  TensorData y(x.dtype, shape);
  size_t flat = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i : indices) {
      for (int64_t e = 0; e < inner; ++e) {
        y.values[flat++] = x.values[(o * extent + i) * inner + e];
      }
    }
  }
  return std::vector<TensorData>{std::move(y)};
}

absl::Status EmitGather(const Node& node, KernelEmitter& e) {
  const TensorData* indices = e.input(1).constant;
  if (indices == nullptr || !indices->shape.empty()) {
    return NoKernel(node, "indices that are not a constant scalar");
  }
  const std::vector<int64_t>& x = e.input(0).type.shape;
  int64_t axis = 0;
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                         GatherShape(node, x, indices->shape, &axis));
  int64_t index = ConstantInts(*indices)[0];
  if (index < -x[axis] || index >= x[axis]) {
    return NodeError(node, absl::StrCat("index ", index, " is out of range"));
  }
  if (index < 0) index += x[axis];
  std::vector<std::string> vars =
      shape.empty() ? std::vector<std::string>{} : e.NewVars(shape);
  std::vector<std::string> xi(vars.begin(), vars.begin() + axis);
  xi.push_back(absl::StrCat(index));
  xi.insert(xi.end(), vars.begin() + axis, vars.end());
  LATHE_ASSIGN_OR_RETURN(std::string read, e.Read(0, xi));
  std::vector<std::string> lhs = vars.empty() ? e.NewVars({}) : vars;
  e.Add(e.output_name(), lhs, "=", read);
  return absl::OkStatus();
}

// GatherElements: out[i] = data[i with i[axis] replaced by indices[i]]
// (indices shaped like the output). Host evaluation only.
absl::StatusOr<std::vector<TensorType>> InferGatherElements(const Graph& graph,
                                                            const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 2, 2));
  const TensorType& x = InputType(graph, node, 0);
  const TensorType& i = InputType(graph, node, 1);
  if (!i.dtype.is_int()) return NodeError(node, "indices must be integers");
  if (i.shape.size() != x.shape.size() || x.shape.empty()) {
    return NodeError(node, "indices must have the data's rank");
  }
  LATHE_RETURN_IF_ERROR(NormalizeAxis(node, IntAttr(node, "axis", 0),
                                      static_cast<int64_t>(x.shape.size()))
                            .status());
  return std::vector<TensorType>{TensorType{x.dtype, i.shape}};
}

absl::StatusOr<std::vector<TensorData>> EvalGatherElements(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  const TensorData& indices = *in[1];
  LATHE_ASSIGN_OR_RETURN(int64_t axis,
                         NormalizeAxis(node, IntAttr(node, "axis", 0),
                                       static_cast<int64_t>(x.shape.size())));
  const std::vector<int64_t> xs = Strides(x.shape);
  TensorData y(x.dtype, indices.shape);
  std::vector<int64_t> picks = ConstantInts(indices);
  const std::vector<int64_t> is = Strides(indices.shape);
  const int64_t extent = x.shape[axis];
  for (int64_t e = 0; e < y.size(); ++e) {
    int64_t pick = picks[e];
    if (pick < -extent || pick >= extent) {
      return NodeError(node, absl::StrCat("index ", pick, " out of range"));
    }
    if (pick < 0) pick += extent;
    int64_t o = 0;
    for (size_t a = 0; a < is.size(); ++a) {
      const int64_t at = static_cast<int64_t>(a) == axis
                             ? pick
                             : (e / is[a]) % indices.shape[a];
      if (at >= x.shape[a]) {
        return NodeError(node, "indices exceed the data's shape");
      }
      o += at * xs[a];
    }
    y.values[e] = x.values[o];
  }
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

std::vector<OpDef> GatherOps() {
  return {
      {"Gather", FusionRole::kOwnKernel, InferGather, EvalGather, EmitGather},
      {"GatherElements", FusionRole::kHost, InferGatherElements,
       EvalGatherElements, nullptr}};
}

}  // namespace lathe::graph
