#include "compiler/graph/pipeline.h"

#include "compiler/graph/blocked_layouts.h"
#include "compiler/graph/passes/average_pool_counts.h"
#include "compiler/graph/passes/eliminate_dead_nodes.h"
#include "compiler/graph/passes/fold_batch_norm.h"
#include "compiler/graph/passes/infer_types.h"
#include "compiler/graph/passes/winograd_conv.h"

namespace lathe::graph {

absl::Status RunGraphPasses(Graph& graph, const PassObserver& observer) {
  absl::Status status = graph.Verify();
  if (!status.ok()) return status;
  struct Pass {
    const char* name;
    absl::Status (*run)(Graph&);
  };
  const Pass passes[] = {
      {"infer-types", [](Graph& g) { return InferTypes(g); }},
      {"fold-batch-norm", [](Graph& g) { return FoldBatchNorm(g); }},
      {"winograd-conv", [](Graph& g) { return SplitWinogradConvs(g); }},
      {"average-pool-counts", [](Graph& g) { return AddAveragePoolCounts(g); }},
      {"eliminate-dead-nodes", [](Graph& g) { return EliminateDeadNodes(g); }},
  };
  for (const Pass& pass : passes) {
    status = pass.run(graph);
    if (!status.ok()) return status;
    if (observer) observer(pass.name, graph);
  }
  return graph.Verify();
}

absl::StatusOr<KernelPartition> RunPassesAndPartition(Graph& graph) {
  absl::Status status = RunGraphPasses(graph);
  if (!status.ok()) return status;
  absl::StatusOr<KernelPartition> partition = PartitionGraph(graph);
  if (!partition.ok()) return partition.status();
  status = BlockActivations(graph, *partition);
  if (!status.ok()) return status;
  return partition;
}

}  // namespace lathe::graph
