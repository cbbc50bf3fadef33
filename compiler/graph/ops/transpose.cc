// Transpose: axes permuted by `perm` (default: reversed).
#include <algorithm>

#include "absl/strings/str_join.h"
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<int64_t>> Perm(const Node& node, size_t rank) {
  std::vector<int64_t> perm = IntsAttr(node, "perm", {});
  if (perm.empty()) {
    for (size_t a = rank; a-- > 0;) perm.push_back(static_cast<int64_t>(a));
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t a = 0; a < sorted.size(); ++a) {
    if (sorted[a] != static_cast<int64_t>(a) || sorted.size() != rank) {
      return NodeError(
          node, absl::StrCat("perm ", absl::StrJoin(perm, ","),
                             " is not a permutation of ", rank, " axes"));
    }
  }
  if (rank == 0 && !perm.empty()) return NodeError(node, "perm of a scalar");
  return perm;
}

absl::StatusOr<std::vector<TensorType>> InferTranspose(const Graph& graph,
                                                       const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 1, 1));
  const TensorType& x = InputType(graph, node, 0);
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> perm, Perm(node, x.shape.size()));
  TensorType y{x.dtype, {}};
  for (int64_t p : perm) y.shape.push_back(x.shape[p]);
  return std::vector<TensorType>{y};
}

absl::StatusOr<std::vector<TensorData>> EvalTranspose(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> perm, Perm(node, x.shape.size()));
  std::vector<int64_t> shape;
  for (int64_t p : perm) shape.push_back(x.shape[p]);
  TensorData y(x.dtype, shape);
  const std::vector<int64_t> xs = Strides(x.shape);
  size_t flat = 0;
  ForEachIndex(shape, [&](const std::vector<int64_t>& i) {
    int64_t o = 0;
    for (size_t a = 0; a < i.size(); ++a) o += i[a] * xs[perm[a]];
    y.values[flat++] = x.values[o];
  });
  return std::vector<TensorData>{std::move(y)};
}

absl::Status EmitTranspose(const Node& node, KernelEmitter& e) {
  const std::vector<int64_t>& shape = e.output_type().shape;
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> perm, Perm(node, shape.size()));
  std::vector<std::string> vars = e.NewVars(shape);
  std::vector<std::string> xi(shape.size());
  for (size_t a = 0; a < perm.size(); ++a) xi[perm[a]] = vars[a];
  LATHE_ASSIGN_OR_RETURN(std::string read, e.Read(0, xi));
  e.Add(e.output_name(), vars, "=", read);
  return absl::OkStatus();
}

}  // namespace

std::vector<OpDef> TransposeOps() {
  return {{"Transpose", FusionRole::kOwnKernel, InferTranspose, EvalTranspose,
           EmitTranspose}};
}

}  // namespace lathe::graph
