// Pooling: MaxPool and AveragePool over N-D windows (strides, pads,
// dilations for MaxPool, ceil_mode, auto_pad, count_include_pad), and
// GlobalAveragePool / GlobalMaxPool over all spatial positions.
//
// Kernel form: a `max=` or `+=` statement over the window; max pooling
// reads the input padded with -FLT_MAX, average pooling zero-padded and
// divides by the window size, or, where the count varies at the borders
// (padding excluded, or a ceil_mode window past the padding), by a count
// tensor that passes/average_pool_counts.h adds as AveragePool's input 1
// (a Lathe extension; the host evaluation ignores it).
#include <algorithm>
#include <limits>
#include <optional>

#include "compiler/graph/ops/op_definition.h"
#include "compiler/graph/ops/window.h"

namespace lathe::graph {
namespace {

bool IsMax(const Node& node) {
  return node.op == "MaxPool" || node.op == "GlobalMaxPool";
}
bool IsGlobal(const Node& node) {
  return node.op == "GlobalAveragePool" || node.op == "GlobalMaxPool";
}

absl::StatusOr<Window> PoolWindow(const Node& node,
                                  const std::vector<int64_t>& x) {
  if (x.size() < 3) return NodeError(node, "input rank below 3");
  std::vector<int64_t> in(x.begin() + 2, x.end());
  if (IsGlobal(node)) {
    Window w;
    w.kernel = in;
    w.strides.assign(in.size(), 1);
    w.dilations.assign(in.size(), 1);
    w.pads_begin.assign(in.size(), 0);
    w.pads_end.assign(in.size(), 0);
    w.out.assign(in.size(), 1);
    return w;
  }
  std::vector<int64_t> kernel = IntsAttr(node, "kernel_shape", {});
  if (kernel.size() != in.size()) {
    return NodeError(
        node, absl::StrCat("kernel_shape has ", kernel.size(), " values for ",
                           in.size(), " spatial axes"));
  }
  if (IntAttr(node, "storage_order", 0) != 0) {
    return UnsupportedAttr(node, "storage_order", "1");
  }
  return ComputeWindow(node, in, kernel, IntAttr(node, "ceil_mode", 0) != 0);
}

absl::StatusOr<std::vector<TensorType>> InferPool(const Graph& graph,
                                                  const Node& node) {
  LATHE_RETURN_IF_ERROR(
      CheckInputCount(node, 1, node.op == "AveragePool" ? 2 : 1));
  LATHE_RETURN_IF_ERROR(CheckFloat(graph, node, 0));
  if (node.outputs.size() > 1) {
    return UnsupportedAttr(node, "output Indices", "present");
  }
  const std::vector<int64_t>& x = InputType(graph, node, 0).shape;
  LATHE_ASSIGN_OR_RETURN(Window w, PoolWindow(node, x));
  if (HasInput(node, 1) &&
      !(InputType(graph, node, 1) == TensorType{DType::Float32(), w.out})) {
    return NodeError(node,
                     "the window counts (input 1) must be float32 "
                     "shaped like the output's spatial axes");
  }
  std::vector<int64_t> out = {x[0], x[1]};
  out.insert(out.end(), w.out.begin(), w.out.end());
  return std::vector<TensorType>{TensorType{DType::Float32(), out}};
}

absl::StatusOr<std::vector<TensorData>> EvalPool(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  LATHE_ASSIGN_OR_RETURN(Window w, PoolWindow(node, x.shape));
  const size_t d = w.out.size();
  const bool is_max = IsMax(node);
  const bool include_pad = IntAttr(node, "count_include_pad", 0) != 0;
  std::vector<int64_t> out_shape = {x.shape[0], x.shape[1]};
  out_shape.insert(out_shape.end(), w.out.begin(), w.out.end());
  TensorData y(DType::Float32(), out_shape);
  const std::vector<int64_t> xs = Strides(x.shape);
  size_t flat = 0;
  ForEachIndex(out_shape, [&](const std::vector<int64_t>& o) {
    double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
    int64_t count = 0;
    ForEachIndex(w.kernel, [&](const std::vector<int64_t>& r) {
      int64_t xo = o[0] * xs[0] + o[1] * xs[1];
      bool inside = true, in_padded = true;
      for (size_t a = 0; a < d; ++a) {
        const int64_t pos =
            o[2 + a] * w.strides[a] + r[a] * w.dilations[a] - w.pads_begin[a];
        const int64_t extent = x.shape[2 + a];
        if (pos < 0 || pos >= extent) inside = false;
        if (pos < -w.pads_begin[a] || pos >= extent + w.pads_end[a]) {
          in_padded = false;
        }
        xo += pos * xs[2 + a];
      }
      if (inside) {
        acc = is_max ? std::max(acc, x.values[xo]) : acc + x.values[xo];
        ++count;
      } else if (include_pad && in_padded) {
        ++count;
      }
    });
    y.values[flat++] = is_max ? acc : acc / static_cast<double>(count);
  });
  RoundValues(y);
  return std::vector<TensorData>{std::move(y)};
}

absl::Status EmitPool(const Node& node, KernelEmitter& e) {
  const std::vector<int64_t>& x = e.input(0).type.shape;
  LATHE_ASSIGN_OR_RETURN(Window w, PoolWindow(node, x));
  const size_t d = w.out.size();
  const bool is_max = IsMax(node);
  // Does a window reach outside the input (padding, or a ceil_mode tail)?
  bool reaches_pad = false, reaches_past_pad = false;
  for (size_t a = 0; a < d; ++a) {
    const int64_t last = (w.out[a] - 1) * w.strides[a] +
                         (w.kernel[a] - 1) * w.dilations[a] - w.pads_begin[a];
    if (w.pads_begin[a] > 0 || last >= x[2 + a]) reaches_pad = true;
    if (last >= x[2 + a] + w.pads_end[a]) reaches_past_pad = true;
  }
  const bool include_pad = IntAttr(node, "count_include_pad", 0) != 0;
  const bool varying_count =
      !is_max && reaches_pad && (!include_pad || reaches_past_pad);
  if (varying_count && !e.has_input(1)) {
    return NoKernel(node,
                    "the window count varies at the borders and no count "
                    "tensor was added (passes/average_pool_counts.h)");
  }
  std::vector<int64_t> out_shape = {x[0], x[1]};
  out_shape.insert(out_shape.end(), w.out.begin(), w.out.end());
  std::vector<std::string> vars = e.NewVars(out_shape);
  std::vector<std::string> xi = {vars[0], vars[1]};
  for (size_t a = 0; a < d; ++a) {
    std::string r = e.NewVar(w.kernel[a]);
    xi.push_back(KernelEmitter::Affine(
        {{w.strides[a], vars[2 + a]}, {w.dilations[a], r}}, -w.pads_begin[a]));
  }
  if (is_max && reaches_pad) {
    LATHE_RETURN_IF_ERROR(e.SetPadValue(
        0, -static_cast<double>(std::numeric_limits<float>::max())));
  }
  LATHE_ASSIGN_OR_RETURN(std::string read, e.Read(0, xi, reaches_pad));
  if (is_max) {
    e.Add(e.output_name(), vars, "max=", read);
    return absl::OkStatus();
  }
  const std::string acc = e.NewTensor();
  e.Add(acc, vars, "+=", read);
  std::vector<std::string> v2 = e.NewVars(out_shape);
  std::string divisor = absl::StrCat(NumElements(w.kernel));
  if (varying_count) {
    LATHE_ASSIGN_OR_RETURN(
        divisor, e.Read(1, std::vector<std::string>(v2.begin() + 2, v2.end())));
  }
  e.Add(e.output_name(), v2, "=",
        absl::StrCat(KernelEmitter::ReadTensor(acc, v2), " / ", divisor));
  return absl::OkStatus();
}

}  // namespace

std::optional<TensorData> AveragePoolCounts(const Node& node,
                                            const std::vector<int64_t>& x) {
  if (node.op != "AveragePool") return std::nullopt;
  absl::StatusOr<Window> window = PoolWindow(node, x);
  if (!window.ok()) return std::nullopt;
  const Window& w = *window;
  const bool include_pad = IntAttr(node, "count_include_pad", 0) != 0;
  // Per axis, the count of each output position; the count of a window is
  // their product.
  std::vector<std::vector<int64_t>> per_axis(w.out.size());
  bool varies = false;
  for (size_t a = 0; a < w.out.size(); ++a) {
    const int64_t extent = x[2 + a];
    const int64_t lo = include_pad ? -w.pads_begin[a] : 0;
    const int64_t hi = include_pad ? extent + w.pads_end[a] : extent;
    for (int64_t o = 0; o < w.out[a]; ++o) {
      int64_t count = 0;
      for (int64_t r = 0; r < w.kernel[a]; ++r) {
        const int64_t pos =
            o * w.strides[a] + r * w.dilations[a] - w.pads_begin[a];
        if (pos >= lo && pos < hi) ++count;
      }
      if (count != w.kernel[a]) varies = true;
      per_axis[a].push_back(count);
    }
  }
  if (!varies) return std::nullopt;
  TensorData counts(DType::Float32(), w.out);
  size_t flat = 0;
  ForEachIndex(w.out, [&](const std::vector<int64_t>& o) {
    double count = 1;
    for (size_t a = 0; a < o.size(); ++a) count *= per_axis[a][o[a]];
    counts.values[flat++] = count;
  });
  return counts;
}

std::vector<OpDef> PoolOps() {
  std::vector<OpDef> defs;
  for (const char* op :
       {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"}) {
    defs.push_back({op, FusionRole::kAnchor, InferPool, EvalPool, EmitPool});
  }
  return defs;
}

}  // namespace lathe::graph
