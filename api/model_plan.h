// What loading a model makes of its graph before any kernel is built, the
// same for a CPU (model.h) and a GPU (gpu_model.h): known input values
// bound, the passes run, the steps cut (kernels, host steps, views), the
// intermediates laid out in an arena; and the evaluation of a host step's
// node, checked against the types the passes inferred.
// Tests: tests/api/model_test.cc, tests/api/gpu_model_test.cc.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/model_io.h"
#include "compiler/graph/graph.h"
#include "compiler/graph/kernel_partition.h"
#include "compiler/graph/memory_plan.h"
#include "compiler/interp/tensor_data.h"

namespace lathe::api {

struct ModelPlan {
  graph::Graph graph;  // after the passes
  graph::KernelPartition partition;
  graph::MemoryPlan memory;
  std::vector<ModelTensor> inputs;
  std::vector<ModelTensor> outputs;
  // The distinct kernel workloads, in the order of their first step.
  std::vector<std::string> workloads;
  // The steps counted and the arena's sizes; the kernels' counts are the
  // loader's to fill.
  ModelStats stats;
};

// Errors: those of graph::BindInputValues, the passes, the partition and
// the memory plan; (Internal) a kernel step with an argument that is not
// float32 (naming its workload).
absl::StatusOr<ModelPlan> PlanModel(
    graph::Graph graph, const std::map<std::string, TensorData>& input_values);

// A host step's node evaluated on `inputs` (one per node input, null for an
// absent one): its outputs, each of the dtype and shape the passes
// inferred. Errors name the node and its op: the evaluation's, or
// (Internal) an output that is not the inferred type.
absl::StatusOr<std::vector<TensorData>> EvaluateHostNode(
    const graph::Graph& graph, const graph::Node& node,
    const std::vector<const TensorData*>& inputs);

}  // namespace lathe::api
