// A model run on a GPU: the graph of a model (an ONNX file imported by the
// caller, compiler/frontend/onnx), rewritten by the graph passes and cut
// into the same steps as on a CPU (compiler/graph/pipeline.h), so that the
// tasks `lathe tune MODEL --target cuda` tuned are the kernels it runs.
//
//   lathe::api::GpuModelOptions options;
//   options.db_path = "tuned.db";  // records for the cuda target
//   absl::StatusOr<std::unique_ptr<lathe::api::GpuModel>> model =
//       lathe::api::GpuModel::FromGraph(*std::move(graph), options);
//   absl::StatusOr<std::vector<lathe::TensorData>> outputs =
//       (*model)->Run({image});
//
// - Each distinct fused workload is built once, at load: the best record
//   of the database for the cuda target whose trace still replays
//   (api/kernel_plan.h; compatible targets when asked), else the default
//   GPU schedule; CUDA C compiled by NVRTC to a cubin for the device's
//   architecture and loaded. stats() and origins() say which came from
//   where.
// - Device memory is allocated at load, once: the float32 constants the
//   steps read (copied there at load), the arena of the intermediates
//   (compiler/graph/memory_plan.h: tensors whose lifetimes do not overlap
//   share bytes), and a buffer of each graph input and output. Views
//   (alias steps) share their input's bytes.
// - A run copies the float32 inputs to the device, launches the kernels in
//   step order in one stream, and copies the outputs back. Non-float32
//   work (shape and index arithmetic left after folding) runs on the host,
//   as on a CPU: a host step's float32 inputs are copied from the device
//   and its float32 outputs to it.
// - Run checks the inputs (count, dtype, shape) and names the one at fault.
//   Runs may come from several threads; they take turns (one device, one
//   set of buffers).
// - step_seconds, when given, is filled with each step's wall time, the
//   device waited for after each step (so a run that asks is slower).
// Errors of FromGraph: an input value for no input or of the wrong dtype or
// shape (naming it); those of the passes and the partition; a target that
// is not cuda or is for another architecture than the device's; a database
// that does not open; a kernel whose schedule, code generation or NVRTC
// compile fails (naming its workload); the device's (no driver, no GPU,
// out of memory).
// Tests: tests/api/gpu_model_test.cc (on an emulated device); on a GPU,
// tools/lathe_gpu_check.cc (--model).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/kernel_origin.h"
#include "api/model_device.h"
#include "api/model_io.h"
#include "compiler/graph/graph.h"
#include "compiler/graph/kernel_partition.h"
#include "compiler/graph/memory_plan.h"
#include "compiler/interp/tensor_data.h"
#include "compiler/target/target.h"

namespace lathe::api {

struct GpuModelOptions {
  std::string db_path;  // empty: no database, default schedules
  // A cuda target (cuda -arch=sm_XX ...); bare "cuda" is the device's.
  std::string target = "cuda";
  bool compatible = false;  // records of compatible targets too
  // Inputs whose values are known at load, by name: they become constants
  // (compiler/graph/bind_inputs.h) and inputs() and Run leave them out.
  std::map<std::string, TensorData> input_values;
  // Where the model runs; null: this machine's first GPU (CudaModelDevice).
  std::shared_ptr<ModelDevice> device;
};

class GpuModel {
 public:
  static absl::StatusOr<std::unique_ptr<GpuModel>> FromGraph(
      graph::Graph graph, const GpuModelOptions& options = {});

  ~GpuModel();
  GpuModel(const GpuModel&) = delete;
  GpuModel& operator=(const GpuModel&) = delete;

  // The outputs in graph-output order, for inputs in graph-input order.
  // Errors (InvalidArgument): a wrong number of inputs, an input of the
  // wrong dtype or shape (naming it); the device's, naming the step that
  // failed (a kernel's fault surfaces at the next copy or wait).
  absl::StatusOr<std::vector<TensorData>> Run(
      const std::vector<TensorData>& inputs,
      std::vector<double>* step_seconds = nullptr) const;

  const std::vector<ModelTensor>& inputs() const { return inputs_; }
  const std::vector<ModelTensor>& outputs() const { return outputs_; }
  const ModelStats& stats() const { return stats_; }
  const graph::Graph& graph() const { return graph_; }
  const graph::KernelPartition& partition() const { return partition_; }
  // Where each distinct workload's schedule came from.
  const std::map<std::string, KernelOrigin>& origins() const {
    return origins_;
  }
  const Target& target() const { return target_; }
  std::string device_name() const { return device_->name(); }

 private:
  class HostValues;  // one run's host values

  GpuModel() = default;
  absl::Status Prepare(graph::Graph graph, const GpuModelOptions& options);
  absl::Status BuildKernels(const GpuModelOptions& options,
                            const std::vector<std::string>& workloads);
  absl::Status PlaceValues();
  absl::Status RunSteps(HostValues& run,
                        std::vector<double>* step_seconds) const;

  graph::Graph graph_;
  graph::KernelPartition partition_;
  graph::MemoryPlan memory_plan_;
  Target target_;
  std::shared_ptr<ModelDevice> device_;
  std::map<std::string, std::unique_ptr<ModelDevice::Module>> modules_;
  std::map<std::string, KernelOrigin> origins_;
  // Per step of partition_: its module (null for host and alias steps).
  std::vector<ModelDevice::Module*> step_modules_;
  // Per value id: where its float32 data lies on the device (0: nowhere,
  // the value is not float32 or no step reads or writes it).
  std::vector<ModelDevice::Address> address_;
  // The device buffers the model allocated, freed with it.
  std::vector<ModelDevice::Address> allocations_;
  std::vector<ModelTensor> inputs_;
  std::vector<ModelTensor> outputs_;
  ModelStats stats_;
  mutable std::mutex run_mutex_;  // runs take turns
};

}  // namespace lathe::api
