// The operators of the graph IR: for each ONNX operator Lathe supports (at
// opset 17 semantics), its type inference, its host evaluation and, for
// float32 work, the statements of a custom workload that compute it
// (kernel_emitter.h).
//
// Contract:
// - Each operator is defined once, in its own file under ops/ (or a file of
//   a small family, such as the unary elementwise operators); this registry
//   only lists them.
// - Type inference checks the node's inputs and attributes and refuses what
//   Lathe does not support, naming the node, its op and the attribute or
//   input at fault. It may read constant inputs (a Reshape's shape).
// - Host evaluation computes the outputs from input data of any dtype the
//   operator supports (float32, int64, int32, bool at least): it is what
//   constant folding and host steps run, and the reference fused kernels are
//   checked against. Values are held as double and rounded to the output
//   dtype; int64 values beyond 2^53 (a Slice end of INT64_MAX) are clamped
//   by the operators that read them before they are used.
// - The fusion role says how kernel_partition.h may group the operator.
// Tests: tests/compiler/graph/op_registry_test.cc.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/graph/graph.h"
#include "compiler/interp/tensor_data.h"

namespace lathe::graph {

class KernelEmitter;

// How fusion may group an operator.
enum class FusionRole {
  // Each output element from the input elements at the same (broadcast)
  // position: absorbed into the kernel of what precedes it, or chained.
  kElementwise,
  // Conv, ConvTranspose, Gemm, MatMul, pools, reductions: start a kernel and
  // absorb the elementwise operators that follow.
  kAnchor,
  // Softmax, LayerNormalization and data movement (Transpose, Concat, Slice,
  // Pad, ...): a kernel of its own that may absorb following elementwise ops.
  kOwnKernel,
  // Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout: the output
  // shares the input's buffer.
  kView,
  // Never a kernel: evaluated on the host (Shape, Cast, Split, ...).
  kHost,
};

using InferFn = std::function<absl::StatusOr<std::vector<TensorType>>(
    const Graph&, const Node&)>;
using EvalFn = std::function<absl::StatusOr<std::vector<TensorData>>(
    const Node&, const std::vector<const TensorData*>&)>;
// Appends the statements computing the node's first output. Returns
// FailedPrecondition where this node (its attributes, its operands) has no
// kernel form: fusion then makes it a host step.
using EmitFn = std::function<absl::Status(const Node&, KernelEmitter&)>;

struct OpDef {
  std::string op;
  FusionRole role = FusionRole::kHost;
  InferFn infer;
  EvalFn eval;
  EmitFn emit;  // empty: never a kernel
  // False for Lathe's own operators, which only graph passes create (the
  // Winograd transforms): an ONNX file naming one is refused.
  bool onnx = true;
};

// The definition of `op`, or null.
const OpDef* FindOpDef(const std::string& op);
// Every supported ONNX op, sorted.
std::vector<std::string> SupportedOps();

// Unimplemented naming the op when it is not a supported ONNX operator
// (Lathe does not have it, or it is one of Lathe's own).
absl::Status CheckSupported(const std::string& op);
// The types of the node's outputs, from the types (and constant data) of its
// inputs in `graph`. Errors name the node, op and the input or attribute.
absl::StatusOr<std::vector<TensorType>> InferNodeTypes(const Graph& graph,
                                                       const Node& node);
// The node's outputs from its inputs' data (null for an absent optional
// input). Errors name the node and op.
absl::StatusOr<std::vector<TensorData>> EvaluateNode(
    const Node& node, const std::vector<const TensorData*>& inputs);
// The node's statements (see EmitFn); FailedPrecondition when it has none.
absl::Status EmitNode(const Node& node, KernelEmitter& emitter);

}  // namespace lathe::graph
