#include "api/model_plan.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/graph/bind_inputs.h"
#include "compiler/graph/op_registry.h"
#include "compiler/graph/pipeline.h"

namespace lathe::api {

using graph::GraphStep;
using graph::kNoValue;

absl::StatusOr<ModelPlan> PlanModel(
    graph::Graph graph, const std::map<std::string, TensorData>& input_values) {
  ModelPlan plan;
  absl::StatusOr<graph::Graph> bound =
      graph::BindInputValues(std::move(graph), input_values);
  if (!bound.ok()) return bound.status();
  plan.graph = *std::move(bound);
  absl::StatusOr<graph::KernelPartition> partition =
      graph::RunPassesAndPartition(plan.graph);
  if (!partition.ok()) return partition.status();
  plan.partition = *std::move(partition);
  absl::StatusOr<graph::MemoryPlan> memory =
      graph::PlanMemory(plan.graph, plan.partition);
  if (!memory.ok()) return memory.status();
  plan.memory = *std::move(memory);
  const graph::Graph& g = plan.graph;
  for (int v : g.inputs())
    plan.inputs.push_back({g.value(v).name, g.value(v).type});
  for (int v : g.outputs()) {
    plan.outputs.push_back({g.value(v).name, g.value(v).type});
  }
  for (const GraphStep& step : plan.partition.steps) {
    switch (step.kind) {
      case GraphStep::Kind::kKernel:
        ++plan.stats.kernel_steps;
        for (int v : step.args) {
          if (v == kNoValue || g.value(v).type.dtype != DType::Float32()) {
            return absl::InternalError(absl::StrCat(
                "kernel ", step.workload, " has an argument that is not ",
                "float32: ",
                v == kNoValue ? "absent" : TensorTypeText(g.value(v).type)));
          }
        }
        if (std::find(plan.workloads.begin(), plan.workloads.end(),
                      step.workload) == plan.workloads.end()) {
          plan.workloads.push_back(step.workload);
        }
        break;
      case GraphStep::Kind::kHost:
        ++plan.stats.host_steps;
        break;
      case GraphStep::Kind::kAlias:
        ++plan.stats.alias_steps;
        break;
    }
  }
  plan.stats.peak_intermediate_bytes = plan.memory.peak_bytes;
  plan.stats.unshared_intermediate_bytes = plan.memory.unshared_bytes;
  return plan;
}

absl::StatusOr<std::vector<TensorData>> EvaluateHostNode(
    const graph::Graph& graph, const graph::Node& node,
    const std::vector<const TensorData*>& inputs) {
  absl::StatusOr<std::vector<TensorData>> results =
      graph::EvaluateNode(node, inputs);
  if (!results.ok()) {
    return absl::Status(results.status().code(),
                        absl::StrCat("node \"", node.name, "\" (", node.op,
                                     "): ", results.status().message()));
  }
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    int v = node.outputs[o];
    if (v == kNoValue) continue;
    const graph::TensorType& type = graph.value(v).type;
    if (o >= results->size() || (*results)[o].dtype != type.dtype ||
        (*results)[o].shape != type.shape) {
      return absl::InternalError(
          absl::StrCat("node \"", node.name, "\" (", node.op, "): output ", o,
                       " is not the inferred ", TensorTypeText(type)));
    }
  }
  return results;
}

}  // namespace lathe::api
