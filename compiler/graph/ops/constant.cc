// The operators that make constants: Constant (the scalar and list forms
// value_float(s) / value_int(s); the importer turns a tensor `value` into a
// graph constant), ConstantOfShape (the shape in input 1, every element
// attribute `value`, a double, of the dtype of attribute `to`, an ONNX
// data type code defaulting to float), Shape (start/end, opset 15),
// Size and Range (constant scalar inputs). Their results are always folded when
// the input types are known.
#include <algorithm>
#include <cmath>

#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<TensorData> ConstantValue(const Node& node) {
  if (node.Has("value_float")) {
    TensorData t(DType::Float32(), {});
    t.values[0] = FloatAttr(node, "value_float", 0.0);
    RoundValues(t);
    return t;
  }
  if (node.Has("value_int")) {
    TensorData t(DType::Int64(), {});
    t.values[0] = static_cast<double>(IntAttr(node, "value_int", 0));
    return t;
  }
  const auto floats = node.attrs.find("value_floats");
  if (floats != node.attrs.end() &&
      std::holds_alternative<std::vector<double>>(floats->second)) {
    const std::vector<double>& v =
        std::get<std::vector<double>>(floats->second);
    TensorData t(DType::Float32(), {static_cast<int64_t>(v.size())});
    t.values = v;
    RoundValues(t);
    return t;
  }
  if (node.Has("value_ints")) {
    const std::vector<int64_t> v = IntsAttr(node, "value_ints", {});
    TensorData t(DType::Int64(), {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) {
      t.values[i] = static_cast<double>(v[i]);
    }
    return t;
  }
  return NodeError(node, "no value_float(s) or value_int(s) attribute");
}

std::pair<int64_t, int64_t> ShapeRange(const Node& node, int64_t rank) {
  int64_t start = IntAttr(node, "start", 0);
  int64_t end = IntAttr(node, "end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  return {start, std::max(start, end)};
}

// Range: start, start + delta, ... before limit (scalar inputs, constants).
absl::StatusOr<int64_t> RangeLength(const Node& node, double start,
                                    double limit, double delta) {
  if (delta == 0) return NodeError(node, "delta 0");
  const double n = std::ceil((limit - start) / delta);
  if (!(n < static_cast<double>(kMaxGraphElements))) {
    return NodeError(node, "too many elements");
  }
  return std::max<int64_t>(0, static_cast<int64_t>(n));
}

absl::StatusOr<std::vector<TensorType>> InferConstant(const Graph& graph,
                                                      const Node& node) {
  if (node.op == "Constant") {
    LATHE_RETURN_IF_ERROR(CheckInputCount(node, 0, 0));
    LATHE_ASSIGN_OR_RETURN(TensorData t, ConstantValue(node));
    return std::vector<TensorType>{TensorType{t.dtype, t.shape}};
  }
  if (node.op == "Range") {
    LATHE_RETURN_IF_ERROR(CheckInputCount(node, 3, 3));
    LATHE_RETURN_IF_ERROR(CheckSameDType(graph, node));
    double args[3];
    for (size_t i = 0; i < 3; ++i) {
      const TensorData* c = ConstantInput(graph, node, i);
      if (c == nullptr || c->values.size() != 1) {
        return absl::UnimplementedError(absl::StrCat(
            "node ", node.name, " (Range): input ", i,
            " is not a constant scalar; a Range whose length is known only "
            "at run time is not supported"));
      }
      args[i] = c->values[0];
    }
    LATHE_ASSIGN_OR_RETURN(int64_t n,
                           RangeLength(node, args[0], args[1], args[2]));
    return std::vector<TensorType>{
        TensorType{InputType(graph, node, 0).dtype, {n}}};
  }
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 1, 1));
  const TensorType& x = InputType(graph, node, 0);
  if (node.op == "Shape") {
    auto [start, end] = ShapeRange(node, static_cast<int64_t>(x.shape.size()));
    return std::vector<TensorType>{TensorType{DType::Int64(), {end - start}}};
  }
  if (node.op == "Size") {
    return std::vector<TensorType>{TensorType{DType::Int64(), {}}};
  }
  // ConstantOfShape
  const TensorData* shape = ConstantInput(graph, node, 0);
  if (shape == nullptr) {
    return NodeError(node, "shape (input 0) must be a constant");
  }
  LATHE_ASSIGN_OR_RETURN(DType dtype, DataTypeAttr(node, "to", 1));
  std::vector<int64_t> dims = ConstantInts(*shape);
  for (int64_t d : dims) {
    if (d < 0) return NodeError(node, absl::StrCat("shape has dim ", d));
  }
  return std::vector<TensorType>{TensorType{dtype, dims}};
}

absl::StatusOr<std::vector<TensorData>> EvalConstant(
    const Node& node, const std::vector<const TensorData*>& in) {
  if (node.op == "Constant") {
    LATHE_ASSIGN_OR_RETURN(TensorData t, ConstantValue(node));
    return std::vector<TensorData>{std::move(t)};
  }
  if (node.op == "Range") {
    const double start = in[0]->values.at(0), delta = in[2]->values.at(0);
    LATHE_ASSIGN_OR_RETURN(
        int64_t n, RangeLength(node, start, in[1]->values.at(0), delta));
    TensorData t(in[0]->dtype, {n});
    for (int64_t i = 0; i < n; ++i) {
      t.values[i] = start + static_cast<double>(i) * delta;
    }
    RoundValues(t);
    return std::vector<TensorData>{std::move(t)};
  }
  const TensorData& x = *in[0];
  if (node.op == "Shape") {
    auto [start, end] = ShapeRange(node, static_cast<int64_t>(x.shape.size()));
    TensorData t(DType::Int64(), {end - start});
    for (int64_t a = start; a < end; ++a) {
      t.values[a - start] = static_cast<double>(x.shape[a]);
    }
    return std::vector<TensorData>{std::move(t)};
  }
  if (node.op == "Size") {
    TensorData t(DType::Int64(), {});
    t.values[0] = static_cast<double>(NumElements(x.shape));
    return std::vector<TensorData>{std::move(t)};
  }
  LATHE_ASSIGN_OR_RETURN(DType dtype, DataTypeAttr(node, "to", 1));
  std::vector<int64_t> dims = ConstantInts(x);
  for (int64_t d : dims) {
    if (d < 0) return NodeError(node, absl::StrCat("shape has dim ", d));
  }
  LATHE_RETURN_IF_ERROR(CheckShape(node, dims));
  TensorData t(dtype, dims);
  std::fill(t.values.begin(), t.values.end(),
            RoundToDType(FloatAttr(node, "value", 0.0), dtype));
  return std::vector<TensorData>{std::move(t)};
}

}  // namespace

std::vector<OpDef> ConstantOps() {
  std::vector<OpDef> defs;
  for (const char* op :
       {"Constant", "ConstantOfShape", "Shape", "Size", "Range"}) {
    defs.push_back(
        {op, FusionRole::kHost, InferConstant, EvalConstant, nullptr});
  }
  return defs;
}

}  // namespace lathe::graph
