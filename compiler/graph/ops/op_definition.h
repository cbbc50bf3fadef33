// What the operator files under compiler/graph/ops/ share: the lists each
// family contributes to the registry, and the checks, shape arithmetic and
// element iteration their definitions are written with.
//
// Private to compiler/graph (op_registry.h is the public entry point).
// Tests: tests/compiler/graph/op_registry_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/graph/graph.h"
#include "compiler/graph/kernel_emitter.h"
#include "compiler/graph/op_registry.h"
#include "compiler/interp/tensor_data.h"

namespace lathe::graph {

// --- the families (one file each under ops/) ---
std::vector<OpDef> UnaryOps();          // unary.cc
std::vector<OpDef> BinaryOps();         // binary.cc (and variadic, compare)
std::vector<OpDef> ClipOps();           // clip.cc
std::vector<OpDef> WhereOps();          // where.cc
std::vector<OpDef> CastOps();           // cast.cc
std::vector<OpDef> ConvOps();           // conv.cc
std::vector<OpDef> ConvTransposeOps();  // conv_transpose.cc
std::vector<OpDef> GemmOps();           // gemm.cc
std::vector<OpDef> MatMulOps();         // matmul.cc
std::vector<OpDef> PoolOps();           // pool.cc
std::vector<OpDef> BatchNormOps();      // batch_norm.cc
std::vector<OpDef> SoftmaxOps();        // softmax.cc
std::vector<OpDef> LayerNormOps();      // layer_norm.cc
std::vector<OpDef> ReduceOps();         // reduce.cc
std::vector<OpDef> TransposeOps();      // transpose.cc
std::vector<OpDef> ViewOps();           // view.cc (Reshape, Flatten, ...)
std::vector<OpDef> ConcatOps();         // concat.cc
std::vector<OpDef> SplitOps();          // split.cc
std::vector<OpDef> SliceOps();          // slice.cc
std::vector<OpDef> GatherOps();         // gather.cc
std::vector<OpDef> PadOps();            // pad.cc
std::vector<OpDef> ExpandOps();         // expand.cc
std::vector<OpDef> ConstantOps();       // constant.cc (Constant, Shape, ...)
std::vector<OpDef> ArgReduceOps();      // arg_reduce.cc (ArgMax, ArgMin)
std::vector<OpDef> ModOps();            // mod.cc
std::vector<OpDef> TriluOps();          // trilu.cc
std::vector<OpDef> IsNanInfOps();       // is_nan_inf.cc
std::vector<OpDef> CumSumOps();         // cumsum.cc
std::vector<OpDef> TileOps();           // tile.cc
std::vector<OpDef> DepthToSpaceOps();   // depth_to_space.cc
std::vector<OpDef> LossOps();           // loss.cc
std::vector<OpDef> HardmaxOps();        // hardmax.cc
std::vector<OpDef> ScatterOps();        // scatter.cc (GatherND, ScatterND, ...)
std::vector<OpDef> OneHotOps();         // one_hot.cc (OneHot, EyeLike)
// Lathe's own, made by passes/winograd_conv.h:
std::vector<OpDef> WinogradOps();  // winograd.cc

// A grouped Conv (1 < group, not depthwise) computes on a view of its
// output, so nothing may follow it inside its kernel (conv.cc).
bool ConvEndsKernel(const Graph& graph, const Node& node);

// For an AveragePool whose window count varies at the borders, the count of
// each output position (shaped like the output's spatial axes); nullopt
// when every window counts its full size (pool.cc).
std::optional<TensorData> AveragePoolCounts(const Node& node,
                                            const std::vector<int64_t>& x);

// --- errors ---
// InvalidArgument "node NAME (OP): MESSAGE".
absl::Status NodeError(const Node& node, const std::string& message);
// Unimplemented "node NAME (OP): attribute KEY=VALUE is not supported".
absl::Status UnsupportedAttr(const Node& node, const std::string& key,
                             const std::string& value);
// The dtype named by attribute `key`, an ONNX TensorProto data type code
// (`default_code` when absent): float32, uint8, int8, int32, int64, bool,
// float16, float64; UnsupportedAttr for any other code.
absl::StatusOr<DType> DataTypeAttr(const Node& node, const std::string& key,
                                   int64_t default_code);
// FailedPrecondition for an emitter: no kernel form for this node.
absl::Status NoKernel(const Node& node, const std::string& why);

// --- inputs in type inference ---
// Checks the input count is within [min, max] (absent optional inputs at
// the end count).
absl::Status CheckInputCount(const Node& node, size_t min, size_t max);
bool HasInput(const Node& node, size_t i);
const TensorType& InputType(const Graph& graph, const Node& node, size_t i);
// The constant data of input i, or null when it is not a constant.
const TensorData* ConstantInput(const Graph& graph, const Node& node, size_t i);
// Requires input i to be float32 (or any float when `any_float`).
absl::Status CheckFloat(const Graph& graph, const Node& node, size_t i);
// Requires every present input to have the dtype of input 0.
absl::Status CheckSameDType(const Graph& graph, const Node& node);
// Integers of a constant int tensor, clamped to [-2^62, 2^62] so that
// INT64_MAX ends (not exact as double) stay usable.
std::vector<int64_t> ConstantInts(const TensorData& data);
// An attribute with its default when the node lacks it.
int64_t IntAttr(const Node& node, const std::string& key, int64_t fallback);
double FloatAttr(const Node& node, const std::string& key, double fallback);
std::vector<int64_t> IntsAttr(const Node& node, const std::string& key,
                              std::vector<int64_t> fallback = {});
std::string StringAttr(const Node& node, const std::string& key,
                       const std::string& fallback);
// A negative axis counted from the end; InvalidArgument outside [-rank, rank).
absl::StatusOr<int64_t> NormalizeAxis(const Node& node, int64_t axis,
                                      int64_t rank);

// --- shapes ---
// Numpy broadcasting of several shapes; InvalidArgument naming the node.
absl::StatusOr<std::vector<int64_t>> BroadcastShapes(
    const Node& node, const std::vector<std::vector<int64_t>>& shapes);
int64_t NumElements(const std::vector<int64_t>& shape);
std::vector<int64_t> Strides(const std::vector<int64_t>& shape);
// The largest element count a graph value may have.
inline constexpr int64_t kMaxGraphElements = int64_t{1} << 31;
// InvalidArgument when a shape has a negative dim or too many elements.
absl::Status CheckShape(const Node& node, const std::vector<int64_t>& shape);

// --- host evaluation ---
// The flat offset into `in_shape` (right-aligned, broadcast) of each element
// of `out_shape`, in row-major order.
std::vector<int64_t> BroadcastOffsets(const std::vector<int64_t>& in_shape,
                                      const std::vector<int64_t>& out_shape);
// Rounds every value to the dtype.
void RoundValues(TensorData& data);
// Calls fn(index) for each multi-index of `shape` in row-major order.
template <typename Fn>
void ForEachIndex(const std::vector<int64_t>& shape, Fn fn) {
  const int64_t n = NumElements(shape);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    fn(index);
    for (int64_t a = static_cast<int64_t>(shape.size()) - 1; a >= 0; --a) {
      if (++index[a] < shape[a]) break;
      index[a] = 0;
    }
  }
}

}  // namespace lathe::graph
