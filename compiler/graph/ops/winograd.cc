// WinogradInputTransform and WinogradOutputTransform: the two transforms of
// a Winograd F(m x m, 3 x 3) convolution (stride 1, pad 1), which
// passes/winograd_conv.h splits an eligible Conv into around a batched
// MatMul. They are Lathe's own operators: an ONNX file naming one is
// refused (op_registry.h).
//
// With a = m + 2 (the tile) and the tables as inputs, so the operators hold
// no numbers of their own (for Winograd's matrices, B[p,q,i,j] =
// Bt[p,i] Bt[q,j] and A[i,j,p,q] = At[i,p] At[j,q]):
//
//   WinogradInputTransform(X [N,C,H,W], B [a,a,a,a]) -> V [a,a,C,N,Th,Tw]
//     V[p,q,c,n,y,x] = sum_{i,j} B[p,q,i,j] X?[n, c, m*y+i-1, m*x+j-1]
//   (Th = ceil(H/m), Tw = ceil(W/m); X reads zero outside the input);
//
//   WinogradOutputTransform(M [a,a,K,N,Th,Tw], A [m,m,a,a], bias [K]?)
//       -> Y [N,K,Th,m,Tw,m]
//     Y[n,k,y,i,x,j] = sum_{p,q} A[i,j,p,q] M[p,q,k,n,y,x] (+ bias[k]).
//
// V's first three axes are a batched product's [a*a, C, tiles] operand as
// they stand, M is its [a*a, K, tiles] result, and Y with H = m*Th and
// W = m*Tw is the bytes of the convolution's [N, K, H, W] output, so the
// pass joins them with Reshapes (views) and no data moves between kernels.
//
// Kernel form: each one `+=` statement over the two summed axes, then the
// bias add; except an input transform whose table is a constant that is
// zero outside F(2x2, 3x3)'s pairs (each row p of Bt has its non-zeros at
// columns p and 2 - floor(p/2)): one elementwise statement of the four
// products per element that can be non-zero, a quarter of the dense form's
// multiplies and of its reads of X, with the same values (the terms left
// out are exact zeros). The task key tells the two forms apart.
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

// A table is [r,r,a,a] with a >= 3: r = a for the input table, r = a - 2
// (the output tile) for the output table.
absl::Status CheckTable(const Node& node, const std::vector<int64_t>& table,
                        bool input_table) {
  const bool fits = table.size() == 4 && table[3] >= 3 &&
                    table[2] == table[3] && table[0] == table[1] &&
                    table[0] == (input_table ? table[3] : table[3] - 2);
  if (!fits) {
    return NodeError(
        node, absl::StrCat("table ", TensorTypeText({DType::Float32(), table}),
                           input_table ? " must be [a,a,a,a] with a >= 3"
                                       : " must be [a-2,a-2,a,a] with a >= 3"));
  }
  return absl::OkStatus();
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// --- WinogradInputTransform ---

absl::StatusOr<std::vector<int64_t>> InputTransformShape(
    const Node& node, const std::vector<int64_t>& x,
    const std::vector<int64_t>& bt) {
  LATHE_RETURN_IF_ERROR(CheckTable(node, bt, true));
  if (x.size() != 4) {
    return NodeError(
        node, absl::StrCat("input rank ", x.size(), " must be 4 (N, C, H, W)"));
  }
  const int64_t a = bt[3], m = a - 2;
  return std::vector<int64_t>{
      a, a, x[1], x[0], CeilDiv(x[2], m), CeilDiv(x[3], m)};
}

absl::StatusOr<std::vector<TensorType>> InferInputTransform(const Graph& graph,
                                                            const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 2, 2));
  LATHE_RETURN_IF_ERROR(CheckFloat(graph, node, 0));
  LATHE_RETURN_IF_ERROR(CheckFloat(graph, node, 1));
  LATHE_ASSIGN_OR_RETURN(
      std::vector<int64_t> out,
      InputTransformShape(node, InputType(graph, node, 0).shape,
                          InputType(graph, node, 1).shape));
  LATHE_RETURN_IF_ERROR(CheckShape(node, out));
  return std::vector<TensorType>{TensorType{DType::Float32(), out}};
}

absl::StatusOr<std::vector<TensorData>> EvalInputTransform(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  const TensorData& bt = *in[1];
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> out_shape,
                         InputTransformShape(node, x.shape, bt.shape));
  const int64_t a = bt.shape[3], m = a - 2;
  const int64_t h = x.shape[2], w = x.shape[3];
  TensorData v(DType::Float32(), out_shape);
  size_t flat = 0;
  ForEachIndex(out_shape, [&](const std::vector<int64_t>& o) {
    const int64_t p = o[0], q = o[1], c = o[2], n = o[3];
    double acc = 0;
    for (int64_t i = 0; i < a; ++i) {
      const int64_t row = m * o[4] + i - 1;
      if (row < 0 || row >= h) continue;
      for (int64_t j = 0; j < a; ++j) {
        const int64_t col = m * o[5] + j - 1;
        if (col < 0 || col >= w) continue;
        acc += bt.values[((p * a + q) * a + i) * a + j] *
               x.values[((n * x.shape[1] + c) * h + row) * w + col];
      }
    }
    v.values[flat++] = acc;
  });
  RoundValues(v);
  return std::vector<TensorData>{std::move(v)};
}

// F(2x2, 3x3)'s Bt has two non-zeros per row p, at columns p and
// 2 - floor(p/2) (Bt = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]). True when
// the constant table B[p,q,i,j] is zero outside those pairs of columns
// (every table of that shape, whatever its signs).
bool IsPairSupported(const TensorData& table) {
  if (table.shape != std::vector<int64_t>{4, 4, 4, 4}) return false;
  // The same pairs as EmitPairInputTransform's index maps (p, 2 - ph).
  auto in_pair = [](int64_t p, int64_t i) { return i == p || i == 2 - p / 2; };
  size_t flat = 0;
  for (int64_t p = 0; p < 4; ++p) {
    for (int64_t q = 0; q < 4; ++q) {
      for (int64_t i = 0; i < 4; ++i) {
        for (int64_t j = 0; j < 4; ++j) {
          if (table.values[flat++] != 0 && !(in_pair(p, i) && in_pair(q, j))) {
            return false;
          }
        }
      }
    }
  }
  return true;
}

// The 4-term form of a pair-supported table: with p = 2*ph + pl, the output
// declared [2,2,2,2,C,N,Th,Tw] (the bytes of [4,4,C,N,Th,Tw]) and one
// elementwise statement of four products per element where the dense form
// sums sixteen. The index maps are affine in (ph, pl): row p and row
// 2 - ph of the tile.
absl::Status EmitPairInputTransform(const std::vector<int64_t>& out_shape,
                                    KernelEmitter& e) {
  std::vector<std::string> o = e.NewVars(
      {2, 2, 2, 2, out_shape[2], out_shape[3], out_shape[4], out_shape[5]});
  const std::string &ph = o[0], &pl = o[1], &qh = o[2], &ql = o[3];
  const std::string &c = o[4], &n = o[5], &y = o[6], &x = o[7];
  // The tile's rows (and columns): p itself and its pair 2 - ph.
  const std::string p = KernelEmitter::Affine({{2, ph}, {1, pl}}, 0);
  const std::string q = KernelEmitter::Affine({{2, qh}, {1, ql}}, 0);
  const std::string rows[2] = {p, KernelEmitter::Affine({{-1, ph}}, 2)};
  const std::string cols[2] = {q, KernelEmitter::Affine({{-1, qh}}, 2)};
  const std::string xrows[2] = {
      KernelEmitter::Affine({{2, y}, {2, ph}, {1, pl}}, -1),
      KernelEmitter::Affine({{2, y}, {-1, ph}}, 1)};
  const std::string xcols[2] = {
      KernelEmitter::Affine({{2, x}, {2, qh}, {1, ql}}, -1),
      KernelEmitter::Affine({{2, x}, {-1, qh}}, 1)};
  std::string sum;
  for (int r = 0; r < 2; ++r) {
    for (int t = 0; t < 2; ++t) {
      LATHE_ASSIGN_OR_RETURN(
          std::string xr,
          e.Read(0, {n, c, xrows[r], xcols[t]}, /*padded=*/true));
      LATHE_ASSIGN_OR_RETURN(std::string br,
                             e.Read(1, {p, q, rows[r], cols[t]}));
      absl::StrAppend(&sum, sum.empty() ? "" : " + ", br, " * ", xr);
    }
  }
  e.Add(e.output_name(), o, "=", sum);
  return absl::OkStatus();
}

absl::Status EmitInputTransform(const Node& node, KernelEmitter& e) {
  LATHE_ASSIGN_OR_RETURN(
      std::vector<int64_t> out_shape,
      InputTransformShape(node, e.input(0).type.shape, e.input(1).type.shape));
  if (e.input(1).constant != nullptr && IsPairSupported(*e.input(1).constant)) {
    return EmitPairInputTransform(out_shape, e);
  }
  const int64_t a = out_shape[0], m = a - 2;
  std::vector<std::string> o = e.NewVars(out_shape);
  const std::string i = e.NewVar(a), j = e.NewVar(a);
  LATHE_ASSIGN_OR_RETURN(
      std::string xr,
      e.Read(0,
             {o[3], o[2], KernelEmitter::Affine({{m, o[4]}, {1, i}}, -1),
              KernelEmitter::Affine({{m, o[5]}, {1, j}}, -1)},
             /*padded=*/true));
  LATHE_ASSIGN_OR_RETURN(std::string br, e.Read(1, {o[0], o[1], i, j}));
  e.Add(e.output_name(), o, "+=", absl::StrCat(br, " * ", xr));
  return absl::OkStatus();
}

// --- WinogradOutputTransform ---

absl::StatusOr<std::vector<int64_t>> OutputTransformShape(
    const Node& node, const std::vector<int64_t>& mm,
    const std::vector<int64_t>& at) {
  LATHE_RETURN_IF_ERROR(CheckTable(node, at, false));
  const int64_t a = at[3], m = at[0];
  if (mm.size() != 6 || mm[0] != a || mm[1] != a) {
    return NodeError(
        node, absl::StrCat("input ", TensorTypeText({DType::Float32(), mm}),
                           " must be [", a, ",", a, ",K,N,Th,Tw] for table [",
                           m, ",", m, ",", a, ",", a, "]"));
  }
  return std::vector<int64_t>{mm[3], mm[2], mm[4], m, mm[5], m};
}

absl::StatusOr<std::vector<TensorType>> InferOutputTransform(const Graph& graph,
                                                             const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 2, 3));
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (HasInput(node, i)) LATHE_RETURN_IF_ERROR(CheckFloat(graph, node, i));
  }
  const std::vector<int64_t>& mm = InputType(graph, node, 0).shape;
  LATHE_ASSIGN_OR_RETURN(
      std::vector<int64_t> out,
      OutputTransformShape(node, mm, InputType(graph, node, 1).shape));
  if (HasInput(node, 2) &&
      InputType(graph, node, 2).shape != std::vector<int64_t>{mm[2]}) {
    return NodeError(node, absl::StrCat("bias must be [", mm[2], "]"));
  }
  LATHE_RETURN_IF_ERROR(CheckShape(node, out));
  return std::vector<TensorType>{TensorType{DType::Float32(), out}};
}

absl::StatusOr<std::vector<TensorData>> EvalOutputTransform(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& mm = *in[0];
  const TensorData& at = *in[1];
  const TensorData* bias = in.size() > 2 ? in[2] : nullptr;
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> out_shape,
                         OutputTransformShape(node, mm.shape, at.shape));
  const int64_t a = at.shape[3], m = at.shape[0];
  const std::vector<int64_t> ms = Strides(mm.shape);
  TensorData y(DType::Float32(), out_shape);
  size_t flat = 0;
  ForEachIndex(out_shape, [&](const std::vector<int64_t>& o) {
    const int64_t n = o[0], k = o[1], ty = o[2], i = o[3], tx = o[4], j = o[5];
    double acc = bias != nullptr ? bias->values[k] : 0.0;
    for (int64_t p = 0; p < a; ++p) {
      for (int64_t q = 0; q < a; ++q) {
        acc += at.values[((i * m + j) * a + p) * a + q] *
               mm.values[p * ms[0] + q * ms[1] + k * ms[2] + n * ms[3] +
                         ty * ms[4] + tx * ms[5]];
      }
    }
    y.values[flat++] = acc;
  });
  RoundValues(y);
  return std::vector<TensorData>{std::move(y)};
}

absl::Status EmitOutputTransform(const Node& node, KernelEmitter& e) {
  LATHE_ASSIGN_OR_RETURN(
      std::vector<int64_t> out_shape,
      OutputTransformShape(node, e.input(0).type.shape, e.input(1).type.shape));
  const int64_t a = e.input(1).type.shape[3];
  std::vector<std::string> o = e.NewVars(out_shape);
  const std::string p = e.NewVar(a), q = e.NewVar(a);
  LATHE_ASSIGN_OR_RETURN(std::string mr,
                         e.Read(0, {p, q, o[1], o[0], o[2], o[4]}));
  LATHE_ASSIGN_OR_RETURN(std::string ar, e.Read(1, {o[3], o[5], p, q}));
  const std::string sum = absl::StrCat(ar, " * ", mr);
  if (!e.has_input(2)) {
    e.Add(e.output_name(), o, "+=", sum);
    return absl::OkStatus();
  }
  const std::string acc = e.NewTensor();
  e.Add(acc, o, "+=", sum);
  std::vector<std::string> o2 = e.NewVars(out_shape);
  LATHE_ASSIGN_OR_RETURN(std::string br, e.Read(2, {o2[1]}));
  e.Add(e.output_name(), o2, "=",
        absl::StrCat(KernelEmitter::ReadTensor(acc, o2), " + ", br));
  return absl::OkStatus();
}

}  // namespace

std::vector<OpDef> WinogradOps() {
  return {{"WinogradInputTransform", FusionRole::kAnchor, InferInputTransform,
           EvalInputTransform, EmitInputTransform, /*onnx=*/false},
          {"WinogradOutputTransform", FusionRole::kAnchor, InferOutputTransform,
           EvalOutputTransform, EmitOutputTransform, /*onnx=*/false}};
}

}  // namespace lathe::graph
