// Index-driven gathers and scatters, host evaluation only: GatherND
// (batch_dims), ScatterND and ScatterElements (reduction none, add, mul,
// max, min). Indices out of range are errors naming the node.
#include <algorithm>

#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<TensorType>> InferGatherND(const Graph& graph,
                                                      const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 2, 2));
  const TensorType& x = InputType(graph, node, 0);
  const TensorType& i = InputType(graph, node, 1);
  const int64_t b = IntAttr(node, "batch_dims", 0);
  if (!i.dtype.is_int() || i.shape.empty()) {
    return NodeError(node, "indices must be an integer tensor of rank >= 1");
  }
  const int64_t m = i.shape.back();
  const int64_t r = static_cast<int64_t>(x.shape.size());
  if (b < 0 || b + m > r || b >= static_cast<int64_t>(i.shape.size())) {
    return NodeError(node, "indices do not fit the data");
  }
  for (int64_t a = 0; a < b; ++a) {
    if (x.shape[a] != i.shape[a]) return NodeError(node, "batch dims differ");
  }
  std::vector<int64_t> out(i.shape.begin(), i.shape.end() - 1);
  out.insert(out.end(), x.shape.begin() + b + m, x.shape.end());
  return std::vector<TensorType>{TensorType{x.dtype, out}};
}

absl::StatusOr<std::vector<TensorData>> EvalGatherND(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  const TensorData& indices = *in[1];
  const int64_t b = IntAttr(node, "batch_dims", 0);
  const int64_t m = indices.shape.back();
  std::vector<int64_t> out_shape(indices.shape.begin(),
                                 indices.shape.end() - 1);
  out_shape.insert(out_shape.end(), x.shape.begin() + b + m, x.shape.end());
  const std::vector<int64_t> xs = Strides(x.shape);
  const int64_t slice =
      NumElements(std::vector<int64_t>(x.shape.begin() + b + m, x.shape.end()));
  const int64_t tuples = m == 0 ? 0 : indices.size() / m;
  const int64_t per_batch =
      tuples / std::max<int64_t>(1, NumElements(std::vector<int64_t>(
                                        x.shape.begin(), x.shape.begin() + b)));
  const std::vector<int64_t> picks = ConstantInts(indices);
  TensorData y(x.dtype, out_shape);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t batch = per_batch == 0 ? 0 : t / per_batch;
    int64_t o = 0;
    for (int64_t a = b - 1; a >= 0; --a) {
      o += (batch % x.shape[a]) * xs[a];
      batch /= x.shape[a];
    }
    for (int64_t k = 0; k < m; ++k) {
      int64_t p = picks[t * m + k];
      const int64_t extent = x.shape[b + k];
      if (p < -extent || p >= extent) {
        return NodeError(node, absl::StrCat("index ", p, " out of range"));
      }
      if (p < 0) p += extent;
      o += p * xs[b + k];
    }
    for (int64_t e = 0; e < slice; ++e) {
      y.values[t * slice + e] = x.values[o + e];
    }
  }
  return std::vector<TensorData>{std::move(y)};
}

absl::StatusOr<std::vector<TensorType>> InferScatter(const Graph& graph,
                                                     const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 3, 3));
  const std::string reduction = StringAttr(node, "reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul" &&
      reduction != "max" && reduction != "min") {
    return UnsupportedAttr(node, "reduction", reduction);
  }
  if (!InputType(graph, node, 1).dtype.is_int()) {
    return NodeError(node, "indices must be integers");
  }
  return std::vector<TensorType>{InputType(graph, node, 0)};
}

void Combine(const std::string& reduction, double update, double* target) {
  if (reduction == "add") {
    *target += update;
  } else if (reduction == "mul") {
    *target *= update;
  } else if (reduction == "max") {
    *target = std::max(*target, update);
  } else if (reduction == "min") {
    *target = std::min(*target, update);
  } else {
    *target = update;
  }
}

absl::StatusOr<std::vector<TensorData>> EvalScatter(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  const TensorData& indices = *in[1];
  const TensorData& updates = *in[2];
  const std::string reduction = StringAttr(node, "reduction", "none");
  const std::vector<int64_t> xs = Strides(x.shape);
  const std::vector<int64_t> picks = ConstantInts(indices);
  TensorData y = x;
  if (node.op == "ScatterElements") {
    LATHE_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(node, IntAttr(node, "axis", 0),
                                         static_cast<int64_t>(x.shape.size())));
    if (indices.shape != updates.shape ||
        indices.shape.size() != x.shape.size()) {
      return NodeError(node, "indices and updates must match in shape");
    }
    const std::vector<int64_t> is = Strides(indices.shape);
    for (int64_t e = 0; e < indices.size(); ++e) {
      int64_t o = 0;
      for (size_t a = 0; a < is.size(); ++a) {
        int64_t at = (e / is[a]) % indices.shape[a];
        if (static_cast<int64_t>(a) == axis) {
          at = picks[e];
          if (at < -x.shape[a] || at >= x.shape[a]) {
            return NodeError(node, absl::StrCat("index ", at, " out of range"));
          }
          if (at < 0) at += x.shape[a];
        } else if (at >= x.shape[a]) {
          return NodeError(node, "indices exceed the data's shape");
        }
        o += at * xs[a];
      }
      Combine(reduction, updates.values[e], &y.values[o]);
    }
  } else {  // ScatterND
    if (indices.shape.empty()) return NodeError(node, "scalar indices");
    const int64_t m = indices.shape.back();
    if (m > static_cast<int64_t>(x.shape.size())) {
      return NodeError(node, "index tuples longer than the data's rank");
    }
    const int64_t slice =
        NumElements(std::vector<int64_t>(x.shape.begin() + m, x.shape.end()));
    const int64_t tuples = m == 0 ? 0 : indices.size() / m;
    if (updates.size() != tuples * slice) {
      return NodeError(node, "updates do not match the indices");
    }
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t o = 0;
      for (int64_t k = 0; k < m; ++k) {
        int64_t p = picks[t * m + k];
        if (p < -x.shape[k] || p >= x.shape[k]) {
          return NodeError(node, absl::StrCat("index ", p, " out of range"));
        }
        if (p < 0) p += x.shape[k];
        o += p * xs[k];
      }
      for (int64_t e = 0; e < slice; ++e) {
        Combine(reduction, updates.values[t * slice + e], &y.values[o + e]);
      }
    }
  }
  RoundValues(y);
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

std::vector<OpDef> ScatterOps() {
  return {{"GatherND", FusionRole::kHost, InferGatherND, EvalGatherND, nullptr},
          {"ScatterND", FusionRole::kHost, InferScatter, EvalScatter, nullptr},
          {"ScatterElements", FusionRole::kHost, InferScatter, EvalScatter,
           nullptr}};
}

}  // namespace lathe::graph
