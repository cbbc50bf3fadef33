// ReduceSum, ReduceMean, ReduceMax, ReduceMin (kernels), ReduceProd,
// ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp over a set
// of axes (an attribute, or ReduceSum's input 1 since opset 13, which must be a
// constant), keepdims, noop_with_empty_axes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

struct ReduceShape {
  std::vector<bool> reduced;  // per input axis
  std::vector<int64_t> out;
  bool noop = false;
};

absl::StatusOr<ReduceShape> Geometry(const Node& node,
                                     const std::vector<int64_t>& x,
                                     const TensorData* axes_input) {
  std::vector<int64_t> axes = IntsAttr(node, "axes", {});
  if (axes_input != nullptr) axes = ConstantInts(*axes_input);
  const int64_t rank = static_cast<int64_t>(x.size());
  ReduceShape s;
  s.reduced.assign(x.size(), axes.empty());
  if (axes.empty() && IntAttr(node, "noop_with_empty_axes", 0) != 0) {
    s.reduced.assign(x.size(), false);
    s.noop = true;
  }
  for (int64_t a : axes) {
    LATHE_ASSIGN_OR_RETURN(int64_t n, NormalizeAxis(node, a, rank));
    s.reduced[n] = true;
  }
  const bool keepdims = IntAttr(node, "keepdims", 1) != 0;
  for (size_t a = 0; a < x.size(); ++a) {
    if (!s.reduced[a]) {
      s.out.push_back(x[a]);
    } else if (keepdims) {
      s.out.push_back(1);
    }
  }
  return s;
}

absl::StatusOr<const TensorData*> AxesInput(const Graph& graph,
                                            const Node& node) {
  if (!HasInput(node, 1)) return nullptr;
  const TensorData* axes = ConstantInput(graph, node, 1);
  if (axes == nullptr) {
    return NodeError(node, "axes (input 1) must be a constant");
  }
  return axes;
}

absl::StatusOr<std::vector<TensorType>> InferReduce(const Graph& graph,
                                                    const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 1, 2));
  const TensorType& x = InputType(graph, node, 0);
  if (x.dtype.is_bool()) return NodeError(node, "bool input");
  LATHE_ASSIGN_OR_RETURN(const TensorData* axes, AxesInput(graph, node));
  LATHE_ASSIGN_OR_RETURN(ReduceShape s, Geometry(node, x.shape, axes));
  return std::vector<TensorType>{TensorType{x.dtype, s.out}};
}

double Init(const std::string& op) {
  if (op == "ReduceMax") return -std::numeric_limits<double>::infinity();
  if (op == "ReduceMin") return std::numeric_limits<double>::infinity();
  if (op == "ReduceProd") return 1.0;
  return 0.0;
}

absl::StatusOr<std::vector<TensorData>> EvalReduce(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  LATHE_ASSIGN_OR_RETURN(
      ReduceShape s, Geometry(node, x.shape, in.size() > 1 ? in[1] : nullptr));
  if (s.noop) return std::vector<TensorData>{x};
  // The output position of each input element: kept axes only.
  std::vector<int64_t> kept;
  for (size_t a = 0; a < x.shape.size(); ++a) {
    kept.push_back(s.reduced[a] ? 1 : x.shape[a]);
  }
  const std::vector<int64_t> ks = Strides(kept);
  TensorData y(x.dtype, s.out);
  std::fill(y.values.begin(), y.values.end(), Init(node.op));
  std::vector<int64_t> counts(y.values.size(), 0);
  size_t flat = 0;
  ForEachIndex(x.shape, [&](const std::vector<int64_t>& i) {
    int64_t o = 0;
    for (size_t a = 0; a < i.size(); ++a) {
      if (!s.reduced[a]) o += i[a] * ks[a];
    }
    const double v = x.values[flat++];
    double& acc = y.values[o];
    if (node.op == "ReduceMax") {
      acc = std::max(acc, v);
    } else if (node.op == "ReduceMin") {
      acc = std::min(acc, v);
    } else if (node.op == "ReduceProd") {
      acc *= v;
    } else if (node.op == "ReduceSumSquare" || node.op == "ReduceL2") {
      acc += v * v;
    } else if (node.op == "ReduceL1") {
      acc += std::fabs(v);
    } else if (node.op == "ReduceLogSumExp") {
      acc += std::exp(v);
    } else {
      acc += v;
    }
    ++counts[o];
  });
  for (size_t o = 0; o < y.values.size(); ++o) {
    double& v = y.values[o];
    if (node.op == "ReduceMean") {
      v /= static_cast<double>(std::max<int64_t>(1, counts[o]));
    } else if (node.op == "ReduceL2") {
      v = std::sqrt(v);
    } else if (node.op == "ReduceLogSum" || node.op == "ReduceLogSumExp") {
      v = std::log(v);
    }
  }
  RoundValues(y);
  return std::vector<TensorData>{std::move(y)};
}

absl::Status EmitReduce(const Node& node, KernelEmitter& e) {
  const std::vector<int64_t>& x = e.input(0).type.shape;
  const TensorData* axes = e.has_input(1) ? e.input(1).constant : nullptr;
  if (e.has_input(1) && axes == nullptr) return NoKernel(node, "axes");
  LATHE_ASSIGN_OR_RETURN(ReduceShape s, Geometry(node, x, axes));
  if (s.noop) return NoKernel(node, "an empty reduction");
  const bool keepdims = IntAttr(node, "keepdims", 1) != 0;
  std::vector<std::string> vars = e.NewVars(s.out);
  std::vector<std::string> xi;
  size_t o = 0;
  int64_t count = 1;
  for (size_t a = 0; a < x.size(); ++a) {
    if (s.reduced[a]) {
      xi.push_back(e.NewVar(x[a]));
      count *= x[a];
      if (keepdims) ++o;
    } else {
      xi.push_back(vars[o++]);
    }
  }
  LATHE_ASSIGN_OR_RETURN(std::string read, e.Read(0, xi));
  const std::string assign = node.op == "ReduceMax"   ? "max="
                             : node.op == "ReduceMin" ? "min="
                                                      : "+=";
  if (node.op != "ReduceMean") {
    e.Add(e.output_name(), vars, assign, read);
    return absl::OkStatus();
  }
  const std::string acc = e.NewTensor();
  e.Add(acc, vars, assign, read);
  std::vector<std::string> v2 = e.NewVars(s.out);
  e.Add(e.output_name(), v2, "=",
        absl::StrCat(KernelEmitter::ReadTensor(acc, v2), " / ", count));
  return absl::OkStatus();
}

}  // namespace

std::vector<OpDef> ReduceOps() {
  std::vector<OpDef> defs;
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"}) {
    defs.push_back(
        {op, FusionRole::kAnchor, InferReduce, EvalReduce, EmitReduce});
  }
  // Host evaluation only: a product has no kernel form (the expression
  // language has no `*=`); the others are rare enough to stay on the host.
  for (const char* op : {"ReduceProd", "ReduceSumSquare", "ReduceL1",
                         "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"}) {
    defs.push_back({op, FusionRole::kHost, InferReduce, EvalReduce, nullptr});
  }
  return defs;
}

}  // namespace lathe::graph
