// A model loaded to run: an ONNX file imported (compiler/frontend/onnx),
// rewritten by the graph passes (compiler/graph/pipeline.h), cut into steps
// (compiler/graph/kernel_partition.h) and given its kernels, then run on
// inputs as often as asked.
//
//   lathe::api::ModelOptions options;
//   options.db_path = "tuned.db";
//   absl::StatusOr<std::unique_ptr<lathe::api::Model>> model =
//       lathe::api::Model::Load("resnet18.onnx", options);
//   absl::StatusOr<std::vector<lathe::TensorData>> outputs =
//       (*model)->Run({image});
//   // Or, on float buffers (no conversion, the arena reused):
//   std::vector<float> pixels(3 * 224 * 224), logits(1000);
//   absl::Status status = (*model)->RunFloat({absl::MakeConstSpan(pixels)},
//                                            {absl::MakeSpan(logits)});
//
// - Each distinct fused workload is compiled once, from the tuning database
//   when it has a record for the target (exact match, or compatible when
//   asked), from the default schedule otherwise (api/lathe.h); stats() says
//   how many of each.
// - Float32 constants are converted once, at load; a kernel whose tuned
//   schedule packs a constant weight (a layout-free input, Kernel::
//   packed_inputs) gets it packed once, at load, and packed on every Run.
//   The constants a run reads, packed or not, lie in one block in the order
//   the steps read them; that block and each arena ask for huge pages
//   (api/huge_page_buffer.h). Intermediate float32 tensors live in one
//   arena laid out by compiler/graph/memory_plan.h; views (alias steps)
//   share their input's bytes; non-float32 work (shape and index
//   arithmetic left after folding) runs on the host through the operators'
//   host evaluators.
// - Run checks the inputs (count, dtype, shape) and names the one at fault.
// - RunFloat is the path for float32 inputs and outputs: the caller's
//   buffers are read in place (no conversion); an output the steps make
//   (not an input, a constant or a view shared with another output) is
//   written by its step straight into the caller's buffer, the others are
//   copied there; the arena is reused from call to call. Run takes the
//   same steps on the same arenas and converts tensors at its edges only.
//   Outputs must not overlap inputs.
// - Run and RunFloat may be called from several threads at once: each call
//   takes an arena (a workspace) no other call is using, and gives it back
//   when done; the model keeps as many as calls ran at once
//   (workspaces()), so a single caller allocates one, on its first call.
// - Per-step times: pass step_seconds to Run or RunFloat and it is filled
//   with the wall time of each step of partition().steps, in order (kernels,
//   host steps, views); when it is null nothing is timed.
// Errors of Load: an input value of the wrong dtype or shape or for no
// input (naming it), those of the importer, the passes and the partition
// (naming the node, the op or the input), a database that does not open,
// a target that does not parse or cannot run here, a kernel that does not
// compile (naming its workload).
// Tests: tests/api/model_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "api/huge_page_buffer.h"
#include "api/lathe.h"
#include "api/model_io.h"
#include "api/model_plan.h"
#include "compiler/graph/graph.h"
#include "compiler/graph/kernel_partition.h"
#include "compiler/graph/memory_plan.h"
#include "compiler/interp/tensor_data.h"

namespace lathe::api {

struct ModelOptions {
  // Values for the symbolic dimensions of the model's inputs, by input name.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  std::string db_path;  // empty: no database, default schedules
  std::string target = "host";
  bool compatible = false;  // as api::Options::compatible
  // Inputs whose values are known at load, by name: they become constants
  // and fold like any (so that a shape computed from them is known), and
  // inputs() and Run leave them out. `lathe run` binds its integer, bool and
  // scalar inputs this way.
  std::map<std::string, TensorData> input_values;
};

class Model {
 public:
  static absl::StatusOr<std::unique_ptr<Model>> Load(
      const std::string& path, const ModelOptions& options = {});
  // The same from a graph already imported (the passes still run).
  static absl::StatusOr<std::unique_ptr<Model>> FromGraph(
      graph::Graph graph, const ModelOptions& options = {});

  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // The outputs in graph-output order, for inputs in graph-input order.
  // step_seconds: as in the header comment (null: no timing).
  // Errors (InvalidArgument): a wrong number of inputs, an input of the
  // wrong dtype or shape (naming it); (Internal) a kernel that fails.
  absl::StatusOr<std::vector<TensorData>> Run(
      const std::vector<TensorData>& inputs,
      std::vector<double>* step_seconds = nullptr) const;
  // The same for a model whose inputs and outputs are all float32, on the
  // caller's buffers: inputs[i] holds input i's elements (row-major),
  // outputs[i] receives output i's. Errors (InvalidArgument): a wrong
  // number of inputs or outputs, a buffer whose size is not its tensor's
  // element count, an input or output that is not float32 (use Run), each
  // naming the tensor; (Internal) a kernel that fails.
  absl::Status RunFloat(absl::Span<const absl::Span<const float>> inputs,
                        absl::Span<const absl::Span<float>> outputs,
                        std::vector<double>* step_seconds = nullptr) const;
  // How many workspaces (arenas) the model has made so far: the most calls
  // that ran at once.
  int workspaces() const;

  const std::vector<ModelTensor>& inputs() const { return inputs_; }
  const std::vector<ModelTensor>& outputs() const { return outputs_; }
  const ModelStats& stats() const { return stats_; }
  // The graph after the passes, and its steps.
  const graph::Graph& graph() const { return graph_; }
  const graph::KernelPartition& partition() const { return partition_; }
  // The compiled kernels by workload (their origin says tuned or default).
  const std::map<std::string, Kernel>& kernels() const { return kernels_; }

 private:
  class Workspace;
  // Takes an idle workspace or makes one; gives it back on destruction.
  class WorkspaceLease;

  Model() = default;
  absl::Status Prepare(ModelPlan plan, const ModelOptions& options);
  // The steps, in order, on a workspace whose inputs are set.
  absl::Status RunSteps(Workspace& workspace,
                        std::vector<double>* step_seconds) const;

  graph::Graph graph_;
  graph::KernelPartition partition_;
  graph::MemoryPlan memory_plan_;
  std::map<std::string, Kernel> kernels_;
  // Per step of partition_: its kernel (null for host and alias steps).
  std::vector<const Kernel*> step_kernels_;
  // The constants a run reads, in the order the steps read them: those
  // kernels take packed (Kernel::packed_inputs), packed at load for their
  // step, and the float32 constants read as floats.
  HugePageBuffer constants_;
  // Per step of partition_: (argument position, its packed constant in
  // constants_) for the constants its kernel takes packed, so a run looks
  // nothing up.
  std::vector<std::vector<std::pair<size_t, float*>>> step_packed_args_;
  // Per value id: the float32 constant's floats in constants_, when a step
  // reads it unpacked (null otherwise).
  std::vector<float*> constant_data_;
  std::vector<ModelTensor> inputs_;
  std::vector<ModelTensor> outputs_;
  // Per graph output: the value whose storage RunFloat points at the
  // caller's buffer (the root of the output's storage), or kNoValue when
  // the output is copied there after the steps (it is an input, a constant,
  // or shares its storage with another output).
  std::vector<int> output_roots_;
  ModelStats stats_;

  mutable std::mutex workspaces_mutex_;
  mutable std::vector<std::unique_ptr<Workspace>> idle_workspaces_;
  mutable int workspaces_made_ = 0;
};

}  // namespace lathe::api
