// Slice: per axis, the elements start, start+step, ... before end (inputs
// 1-4: starts, ends, optional axes and steps, all constants). Negative
// starts/ends count from the end; they are clamped to the extent (ends of
// INT64_MAX included); negative steps walk backwards.
#include <algorithm>

#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

struct SliceAxis {
  int64_t start = 0, step = 1, extent = 0;
};

absl::StatusOr<std::vector<SliceAxis>> Geometry(
    const Node& node, const std::vector<int64_t>& x,
    const std::vector<const TensorData*>& params) {
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<SliceAxis> axes(x.size());
  for (int64_t a = 0; a < rank; ++a) axes[a] = {0, 1, x[a]};
  std::vector<int64_t> starts = ConstantInts(*params[0]);
  std::vector<int64_t> ends = ConstantInts(*params[1]);
  std::vector<int64_t> which, steps;
  if (params[2] != nullptr) {
    which = ConstantInts(*params[2]);
  } else {
    for (size_t i = 0; i < starts.size(); ++i) {
      which.push_back(static_cast<int64_t>(i));
    }
  }
  if (params[3] != nullptr) {
    steps = ConstantInts(*params[3]);
  } else {
    steps.assign(starts.size(), 1);
  }
  if (ends.size() != starts.size() || which.size() != starts.size() ||
      steps.size() != starts.size()) {
    return NodeError(node, "starts, ends, axes and steps differ in length");
  }
  std::vector<bool> seen(x.size(), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    LATHE_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(node, which[i], rank));
    if (seen[a]) return NodeError(node, absl::StrCat("axis ", a, " repeats"));
    seen[a] = true;
    const int64_t dim = x[a], step = steps[i];
    if (step == 0) return NodeError(node, "step 0");
    int64_t start = starts[i], end = ends[i];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    int64_t count = 0;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      count = end > start ? (end - start + step - 1) / step : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      count = start > end ? (start - end + (-step) - 1) / (-step) : 0;
    }
    axes[a] = {start, step, count};
  }
  return axes;
}

absl::StatusOr<std::vector<const TensorData*>> Params(const Graph& graph,
                                                      const Node& node) {
  std::vector<const TensorData*> params(4, nullptr);
  for (size_t i = 1; i <= 4; ++i) {
    if (!HasInput(node, i)) continue;
    params[i - 1] = ConstantInput(graph, node, i);
    if (params[i - 1] == nullptr) {
      return NodeError(node, absl::StrCat("input ", i, " (",
                                          graph.value(node.inputs[i]).name,
                                          ") must be a constant"));
    }
  }
  return params;
}

absl::StatusOr<std::vector<TensorType>> InferSlice(const Graph& graph,
                                                   const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 3, 5));
  LATHE_ASSIGN_OR_RETURN(std::vector<const TensorData*> params,
                         Params(graph, node));
  const TensorType& x = InputType(graph, node, 0);
  LATHE_ASSIGN_OR_RETURN(std::vector<SliceAxis> axes,
                         Geometry(node, x.shape, params));
  TensorType y{x.dtype, {}};
  for (const SliceAxis& a : axes) y.shape.push_back(a.extent);
  return std::vector<TensorType>{y};
}

absl::StatusOr<std::vector<TensorData>> EvalSlice(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  std::vector<const TensorData*> params(4, nullptr);
  for (size_t i = 1; i < in.size() && i <= 4; ++i) params[i - 1] = in[i];
  LATHE_ASSIGN_OR_RETURN(std::vector<SliceAxis> axes,
                         Geometry(node, x.shape, params));
  std::vector<int64_t> shape;
  for (const SliceAxis& a : axes) shape.push_back(a.extent);
  TensorData y(x.dtype, shape);
  const std::vector<int64_t> xs = Strides(x.shape);
  size_t flat = 0;
  ForEachIndex(shape, [&](const std::vector<int64_t>& i) {
    int64_t o = 0;
    for (size_t a = 0; a < i.size(); ++a) {
      o += (axes[a].start + axes[a].step * i[a]) * xs[a];
    }
    y.values[flat++] = x.values[o];
  });
  return std::vector<TensorData>{std::move(y)};
}

absl::Status EmitSlice(const Node& node, KernelEmitter& e) {
  std::vector<const TensorData*> params(4, nullptr);
  for (size_t i = 1; i <= 4; ++i) {
    if (!e.has_input(i)) continue;
    params[i - 1] = e.input(i).constant;
    if (params[i - 1] == nullptr) return NoKernel(node, "parameters");
  }
  LATHE_ASSIGN_OR_RETURN(std::vector<SliceAxis> axes,
                         Geometry(node, e.input(0).type.shape, params));
  const std::vector<int64_t>& shape = e.output_type().shape;
  std::vector<std::string> vars = e.NewVars(shape);
  std::vector<std::string> xi;
  for (size_t a = 0; a < axes.size(); ++a) {
    xi.push_back(
        KernelEmitter::Affine({{axes[a].step, vars[a]}}, axes[a].start));
  }
  LATHE_ASSIGN_OR_RETURN(std::string read, e.Read(0, xi));
  e.Add(e.output_name(), vars, "=", read);
  return absl::OkStatus();
}

}  // namespace

std::vector<OpDef> SliceOps() {
  return {{"Slice", FusionRole::kOwnKernel, InferSlice, EvalSlice, EmitSlice}};
}

}  // namespace lathe::graph
