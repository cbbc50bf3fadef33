// Pad: `pads` (input 1, a constant: begins then ends, negative ones crop)
// around the data, in mode constant (input 2's value, default 0), reflect
// or edge. Optional axes (input 3) restrict the pads to those axes.
//
// Kernel form: constant mode, a padded read shifted by the begins, with the
// constant as the input's declared pad value.
#include <algorithm>
#include <cmath>

#include "absl/strings/str_join.h"
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<int64_t>> FullPads(const Node& node,
                                              const std::vector<int64_t>& x,
                                              const TensorData& pads_data,
                                              const TensorData* axes_data) {
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> pads = ConstantInts(pads_data);
  std::vector<int64_t> axes;
  if (axes_data != nullptr) {
    axes = ConstantInts(*axes_data);
  } else {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  if (pads.size() != 2 * axes.size()) {
    return NodeError(node, absl::StrCat("pads has ", pads.size(),
                                        " values for ", axes.size(), " axes"));
  }
  std::vector<int64_t> full(2 * x.size(), 0);
  const size_t n = axes.size();
  for (size_t i = 0; i < n; ++i) {
    LATHE_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(node, axes[i], rank));
    full[a] = pads[i];
    full[a + x.size()] = pads[i + n];
  }
  for (int64_t a = 0; a < rank; ++a) {
    if (x[a] + full[a] + full[a + rank] < 0) {
      return NodeError(node,
                       absl::StrCat("pads [", absl::StrJoin(pads, ","),
                                    "] crop more than axis ", a, " holds"));
    }
  }
  return full;
}

absl::StatusOr<std::vector<TensorType>> InferPad(const Graph& graph,
                                                 const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 2, 4));
  const std::string mode = StringAttr(node, "mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    return UnsupportedAttr(node, "mode", mode);
  }
  const TensorData* pads = ConstantInput(graph, node, 1);
  if (pads == nullptr)
    return NodeError(node, "pads (input 1) must be a constant");
  if (HasInput(node, 3) && ConstantInput(graph, node, 3) == nullptr) {
    return NodeError(node, "axes (input 3) must be a constant");
  }
  const TensorType& x = InputType(graph, node, 0);
  LATHE_ASSIGN_OR_RETURN(
      std::vector<int64_t> full,
      FullPads(node, x.shape, *pads, ConstantInput(graph, node, 3)));
  TensorType y = x;
  const size_t rank = x.shape.size();
  for (size_t a = 0; a < rank; ++a) {
    y.shape[a] += full[a] + full[a + rank];
    if (mode != "constant" && x.shape[a] == 0 && y.shape[a] > 0) {
      return NodeError(node, "reflect or edge padding of an empty axis");
    }
    if (mode == "reflect" &&
        (full[a] >= x.shape[a] || full[a + rank] >= x.shape[a]) &&
        (full[a] > 0 || full[a + rank] > 0) && x.shape[a] < 2) {
      return NodeError(node, "reflect padding wider than the axis");
    }
  }
  return std::vector<TensorType>{y};
}

// Maps a position outside [0, extent) back inside for reflect/edge.
int64_t Fold(int64_t pos, int64_t extent, bool reflect) {
  if (!reflect) return std::min(std::max<int64_t>(pos, 0), extent - 1);
  if (extent == 1) return 0;
  const int64_t period = 2 * (extent - 1);
  pos %= period;
  if (pos < 0) pos += period;
  return pos < extent ? pos : period - pos;
}

absl::StatusOr<std::vector<TensorData>> EvalPad(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  LATHE_ASSIGN_OR_RETURN(
      std::vector<int64_t> full,
      FullPads(node, x.shape, *in[1], in.size() > 3 ? in[3] : nullptr));
  const std::string mode = StringAttr(node, "mode", "constant");
  const double fill =
      in.size() > 2 && in[2] != nullptr && !in[2]->values.empty()
          ? in[2]->values[0]
          : 0.0;
  const size_t rank = x.shape.size();
  std::vector<int64_t> shape = x.shape;
  for (size_t a = 0; a < rank; ++a) shape[a] += full[a] + full[a + rank];
  TensorData y(x.dtype, shape);
  const std::vector<int64_t> xs = Strides(x.shape);
  size_t flat = 0;
  ForEachIndex(shape, [&](const std::vector<int64_t>& i) {
    int64_t o = 0;
    bool inside = true;
    for (size_t a = 0; a < rank; ++a) {
      int64_t pos = i[a] - full[a];
      if (pos < 0 || pos >= x.shape[a]) {
        if (mode == "constant") {
          inside = false;
          break;
        }
        pos = Fold(pos, x.shape[a], mode == "reflect");
      }
      o += pos * xs[a];
    }
    y.values[flat++] = inside ? x.values[o] : fill;
  });
  RoundValues(y);
  return std::vector<TensorData>{std::move(y)};
}

absl::Status EmitPad(const Node& node, KernelEmitter& e) {
  if (StringAttr(node, "mode", "constant") != "constant") {
    return NoKernel(node, "reflect or edge mode");
  }
  const TensorData* pads = e.input(1).constant;
  const TensorData* axes = e.has_input(3) ? e.input(3).constant : nullptr;
  if (pads == nullptr || (e.has_input(3) && axes == nullptr)) {
    return NoKernel(node, "parameters");
  }
  const std::vector<int64_t>& x = e.input(0).type.shape;
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> full,
                         FullPads(node, x, *pads, axes));
  double fill = 0;
  if (e.has_input(2)) {
    if (e.input(2).constant == nullptr) return NoKernel(node, "constant_value");
    fill = e.input(2).constant->values.at(0);
    if (!std::isfinite(fill)) return NoKernel(node, "a pad value not finite");
  }
  const std::vector<int64_t>& shape = e.output_type().shape;
  std::vector<std::string> vars = e.NewVars(shape);
  std::vector<std::string> xi;
  bool padded = false;
  for (size_t a = 0; a < x.size(); ++a) {
    xi.push_back(KernelEmitter::Affine({{1, vars[a]}}, -full[a]));
    if (full[a] > 0 || full[a + x.size()] > 0) padded = true;
  }
  if (padded && fill != 0) LATHE_RETURN_IF_ERROR(e.SetPadValue(0, fill));
  LATHE_ASSIGN_OR_RETURN(std::string read, e.Read(0, xi, padded));
  e.Add(e.output_name(), vars, "=", read);
  return absl::OkStatus();
}

}  // namespace

std::vector<OpDef> PadOps() {
  return {{"Pad", FusionRole::kOwnKernel, InferPad, EvalPad, EmitPad}};
}

}  // namespace lathe::graph
