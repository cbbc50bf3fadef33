// Fusion: the graph cut into the steps that run it, in execution order.
//
// - Kernel steps are fused groups of float32 nodes, each emitted as one
//   custom workload (kernel_emitter.h) whose canonical form is the task key:
//   identical groups anywhere give identical forms. The form is the emitted
//   text with its dimensions flattened (compiler/workload/flatten_dims.h):
//   the same memory over fewer loops, so a kernel step's arguments are the
//   graph values' buffers as they are, though the workload may declare
//   them with fewer dimensions. An anchor (Conv,
//   ConvTranspose, Gemm, MatMul, pools, reductions) or a kernel of its own
//   (Softmax, LogSoftmax, LayerNormalization, data movement) absorbs the
//   elementwise nodes that follow while each intermediate has exactly one
//   reader (in the group) and is not a graph output; elementwise nodes that
//   follow no anchor chain the same way. A Transpose (and the elementwise
//   nodes chained after it) whose value only a MatMul or Gemm reads is that
//   product's prologue: emitted first in the product's group rather than as
//   a kernel of its own, so the tuner can fold the transpose into the
//   product's operand read. A depthwise convolution and the 1x1 projection
//   reading it stay two kernels: as one (which the tuner computes at the
//   projection's tiles, tuner/space/compute_producer_at_tile.h) they ran no
//   faster in MobileNetV2 (bench/README.md, "Why the code is as it is").
//   Every group has exactly one output. A node absorbed must read nothing
//   computed by a later step.
// - Alias steps are the views (Reshape, Flatten, Squeeze, Unsqueeze,
//   Identity, Dropout): the output shares the input's buffer.
// - Host steps are everything else: non-float32 work, multi-output nodes
//   (Split), and float32 nodes whose attributes have no kernel form; they run
//   the operator's host evaluation (op_registry.h).
// Tests: tests/compiler/graph/kernel_partition_test.cc.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/graph/graph.h"

namespace lathe::graph {

struct GraphStep {
  enum class Kind { kKernel, kHost, kAlias };
  Kind kind = Kind::kKernel;
  std::vector<int> nodes;  // the nodes it covers, in order
  std::string workload;    // kKernel: the custom workload's canonical form
  std::vector<int> args;   // kKernel: value ids in the workload's C ABI order
                           // (inputs, then the one output)
  double flops = 0;        // kKernel
  std::string anchor;      // kKernel: op of the anchor ("Conv"), or "" for a
                           // chain
};

struct KernelPartition {
  std::vector<GraphStep> steps;  // in execution order
};

// Precondition: RunGraphPasses ran (every value typed). Errors: an untyped
// value (naming it), an emitted group the workload parser refuses (an
// Internal error quoting the text).
absl::StatusOr<KernelPartition> PartitionGraph(const Graph& graph);

}  // namespace lathe::graph
