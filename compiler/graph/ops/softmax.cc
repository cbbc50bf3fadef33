// Softmax and LogSoftmax along one axis (opset 13: any axis, negative
// counted from the end), computed stably: the maximum is subtracted first.
//
// Kernel form: four statements (max, exp, sum, divide or log-subtract);
// a kernel of its own that may absorb a following elementwise chain.
#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<TensorType>> InferSoftmax(const Graph& graph,
                                                     const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 1, 1));
  LATHE_RETURN_IF_ERROR(CheckFloat(graph, node, 0));
  const TensorType& x = InputType(graph, node, 0);
  LATHE_RETURN_IF_ERROR(
      NormalizeAxis(node, IntAttr(node, "axis", -1),
                    static_cast<int64_t>(std::max<size_t>(1, x.shape.size())))
          .status());
  return std::vector<TensorType>{x};
}

absl::StatusOr<std::vector<TensorData>> EvalSoftmax(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  TensorData y = x;
  if (rank == 0) {
    y.values[0] = node.op == "Softmax" ? 1.0 : 0.0;
    return std::vector<TensorData>{std::move(y)};
  }
  LATHE_ASSIGN_OR_RETURN(int64_t axis,
                         NormalizeAxis(node, IntAttr(node, "axis", -1), rank));
  const int64_t extent = x.shape[axis];
  const int64_t inner = Strides(x.shape)[axis];
  const int64_t outer =
      extent == 0 ? 0 : NumElements(x.shape) / (extent * inner);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * extent * inner + i;
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < extent; ++k) {
        mx = std::max(mx, x.values[base + k * inner]);
      }
      double sum = 0;
      for (int64_t k = 0; k < extent; ++k) {
        sum += std::exp(x.values[base + k * inner] - mx);
      }
      for (int64_t k = 0; k < extent; ++k) {
        const double v = x.values[base + k * inner];
        y.values[base + k * inner] = node.op == "Softmax"
                                         ? std::exp(v - mx) / sum
                                         : v - mx - std::log(sum);
      }
    }
  }
  RoundValues(y);
  return std::vector<TensorData>{std::move(y)};
}

// `vars` with position `axis` removed, or replaced by `with`.
std::vector<std::string> Without(std::vector<std::string> vars, int64_t axis) {
  vars.erase(vars.begin() + axis);
  if (vars.empty()) vars.push_back("0");
  return vars;
}

absl::Status EmitSoftmax(const Node& node, KernelEmitter& e) {
  const std::vector<int64_t>& shape = e.output_type().shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) return NoKernel(node, "scalar input");
  LATHE_ASSIGN_OR_RETURN(int64_t axis,
                         NormalizeAxis(node, IntAttr(node, "axis", -1), rank));
  std::vector<int64_t> reduced = shape;
  reduced.erase(reduced.begin() + axis);
  // 1. The maximum along the axis.
  const std::string mx = e.NewTensor();
  std::vector<std::string> w = e.NewVars(reduced);
  std::vector<std::string> full = w;
  if (reduced.empty()) full.clear();
  std::string r = e.NewVar(shape[axis]);
  full.insert(full.begin() + axis, r);
  LATHE_ASSIGN_OR_RETURN(std::string x1, e.Read(0, full));
  e.Add(mx, w, "max=", x1);
  // 2. exp(x - max).
  const std::string ex = e.NewTensor();
  std::vector<std::string> v = e.NewVars(shape);
  LATHE_ASSIGN_OR_RETURN(std::string x2, e.Read(0, v));
  const std::string mx_at_v = KernelEmitter::ReadTensor(mx, Without(v, axis));
  e.Add(ex, v, "=", absl::StrCat("exp(", x2, " - ", mx_at_v, ")"));
  // 3. The sum along the axis.
  const std::string sum = e.NewTensor();
  std::vector<std::string> w2 = e.NewVars(reduced);
  std::vector<std::string> full2 = w2;
  if (reduced.empty()) full2.clear();
  std::string r2 = e.NewVar(shape[axis]);
  full2.insert(full2.begin() + axis, r2);
  e.Add(sum, w2, "+=", KernelEmitter::ReadTensor(ex, full2));
  // 4. The result.
  std::vector<std::string> u = e.NewVars(shape);
  const std::string sum_at_u = KernelEmitter::ReadTensor(sum, Without(u, axis));
  if (node.op == "Softmax") {
    e.Add(e.output_name(), u, "=",
          absl::StrCat(KernelEmitter::ReadTensor(ex, u), " / ", sum_at_u));
  } else {
    LATHE_ASSIGN_OR_RETURN(std::string x3, e.Read(0, u));
    e.Add(
        e.output_name(), u, "=",
        absl::StrCat(x3, " - ", KernelEmitter::ReadTensor(mx, Without(u, axis)),
                     " - log(", sum_at_u, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<OpDef> SoftmaxOps() {
  return {
      {"Softmax", FusionRole::kOwnKernel, InferSoftmax, EvalSoftmax,
       EmitSoftmax},
      {"LogSoftmax", FusionRole::kOwnKernel, InferSoftmax, EvalSoftmax,
       EmitSoftmax},
  };
}

}  // namespace lathe::graph
