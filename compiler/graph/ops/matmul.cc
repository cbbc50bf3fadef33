// MatMul: numpy matmul, batched with broadcast batch dims; a 1-D operand is
// a row (A) or column (B) vector whose axis the result drops.
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

struct MatMulShape {
  std::vector<int64_t> a_batch, b_batch, batch;  // batch dims
  int64_t m = 1, n = 1, k = 0;
  bool a_vector = false, b_vector = false;
  std::vector<int64_t> out;
};

absl::StatusOr<MatMulShape> Geometry(const Node& node,
                                     const std::vector<int64_t>& a,
                                     const std::vector<int64_t>& b) {
  if (a.empty() || b.empty()) return NodeError(node, "scalar operand");
  MatMulShape s;
  s.a_vector = a.size() == 1;
  s.b_vector = b.size() == 1;
  std::vector<int64_t> a2 = a, b2 = b;
  if (s.a_vector) a2.insert(a2.begin(), 1);
  if (s.b_vector) b2.push_back(1);
  s.m = a2[a2.size() - 2];
  s.k = a2.back();
  s.n = b2.back();
  if (b2[b2.size() - 2] != s.k) {
    return NodeError(node, absl::StrCat("inner extents differ: ", s.k, " and ",
                                        b2[b2.size() - 2]));
  }
  s.a_batch.assign(a2.begin(), a2.end() - 2);
  s.b_batch.assign(b2.begin(), b2.end() - 2);
  LATHE_ASSIGN_OR_RETURN(s.batch,
                         BroadcastShapes(node, {s.a_batch, s.b_batch}));
  s.out = s.batch;
  if (!s.a_vector) s.out.push_back(s.m);
  if (!s.b_vector) s.out.push_back(s.n);
  return s;
}

absl::StatusOr<std::vector<TensorType>> InferMatMul(const Graph& graph,
                                                    const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 2, 2));
  LATHE_RETURN_IF_ERROR(CheckSameDType(graph, node));
  const DType dtype = InputType(graph, node, 0).dtype;
  if (dtype.is_bool()) return NodeError(node, "bool inputs");
  LATHE_ASSIGN_OR_RETURN(MatMulShape s,
                         Geometry(node, InputType(graph, node, 0).shape,
                                  InputType(graph, node, 1).shape));
  return std::vector<TensorType>{TensorType{dtype, s.out}};
}

absl::StatusOr<std::vector<TensorData>> EvalMatMul(
    const Node& node, const std::vector<const TensorData*>& in) {
  LATHE_ASSIGN_OR_RETURN(MatMulShape s,
                         Geometry(node, in[0]->shape, in[1]->shape));
  TensorData y(in[0]->dtype, s.out);
  std::vector<int64_t> a_off = BroadcastOffsets(s.a_batch, s.batch);
  std::vector<int64_t> b_off = BroadcastOffsets(s.b_batch, s.batch);
  const int64_t batches = NumElements(s.batch);
  const std::vector<double>& a = in[0]->values;
  const std::vector<double>& b = in[1]->values;
  for (int64_t p = 0; p < batches; ++p) {
    const int64_t ab = a_off[p] * s.m * s.k, bb = b_off[p] * s.k * s.n;
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < s.k; ++k) {
          acc += a[ab + i * s.k + k] * b[bb + k * s.n + j];
        }
        y.values[(p * s.m + i) * s.n + j] = acc;
      }
    }
  }
  RoundValues(y);
  return std::vector<TensorData>{std::move(y)};
}

// The batch part of an operand's index, broadcast to the result's batch.
std::vector<std::string> BatchIndex(const std::vector<int64_t>& operand,
                                    const std::vector<int64_t>& batch,
                                    const std::vector<std::string>& vars) {
  std::vector<std::string> index;
  const size_t offset = batch.size() - operand.size();
  for (size_t j = 0; j < operand.size(); ++j) {
    const bool broadcast = operand[j] == 1 && batch[offset + j] != 1;
    index.push_back(broadcast ? "0" : vars[offset + j]);
  }
  return index;
}

absl::Status EmitMatMul(const Node& node, KernelEmitter& e) {
  LATHE_ASSIGN_OR_RETURN(MatMulShape s, Geometry(node, e.input(0).type.shape,
                                                 e.input(1).type.shape));
  std::vector<std::string> vars = e.NewVars(s.out);
  const size_t nb = s.batch.size();
  std::string m = s.a_vector ? "" : vars[nb];
  std::string n = s.b_vector ? "" : vars[nb + (s.a_vector ? 0 : 1)];
  std::string k = e.NewVar(s.k);
  std::vector<std::string> ai = {k}, bi = {k};
  if (!s.a_vector) {
    ai = BatchIndex(s.a_batch, s.batch, vars);
    ai.push_back(m);
    ai.push_back(k);
  }
  if (!s.b_vector) {
    bi = BatchIndex(s.b_batch, s.batch, vars);
    bi.push_back(k);
    bi.push_back(n);
  }
  LATHE_ASSIGN_OR_RETURN(std::string a, e.Read(0, ai));
  LATHE_ASSIGN_OR_RETURN(std::string b, e.Read(1, bi));
  (void)node;
  e.Add(e.output_name(), vars, "+=", absl::StrCat(a, " * ", b));
  return absl::OkStatus();
}

}  // namespace

std::vector<OpDef> MatMulOps() {
  return {{"MatMul", FusionRole::kAnchor, InferMatMul, EvalMatMul, EmitMatMul}};
}

}  // namespace lathe::graph
