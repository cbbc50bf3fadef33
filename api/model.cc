#include "api/model.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/build_in_parallel.h"
#include "api/model_io.h"
#include "compiler/frontend/onnx/onnx_importer.h"

namespace lathe::api {
namespace {

using graph::GraphStep;
using graph::kNoValue;

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

// Where each value's data is during a run. Made once per concurrent caller
// and reused: the arena, the buffers of storages outside it and the tables
// stay from call to call; Begin forgets what the previous call left.
class Model::Workspace {
 public:
  Workspace(const graph::Graph& graph, const graph::MemoryPlan& plan,
            const std::vector<float*>& constant_data)
      : graph_(graph),
        plan_(plan),
        base_(graph.values().size(), nullptr),
        pointer_(graph.values().size(), nullptr),
        host_(graph.values().size()),
        owned_(graph.values().size()) {
    absl::StatusOr<HugePageBuffer> arena =
        HugePageBuffer::Allocate(static_cast<size_t>(plan.peak_bytes));
    if (arena.ok()) arena_ = *std::move(arena);
    for (size_t v = 0; v < base_.size(); ++v) {
      if (v < constant_data.size() && constant_data[v] != nullptr) {
        base_[v] = constant_data[v];
      } else if (arena_.data() != nullptr &&
                 plan.offsets[v] != graph::kNotPlanned) {
        base_[v] = reinterpret_cast<float*>(arena_.data() + plan.offsets[v]);
      }
    }
  }

  bool arena_ok() const {
    return plan_.peak_bytes == 0 || arena_.data() != nullptr;
  }

  // Forgets the previous call's inputs, outputs and host values.
  void Begin() {
    std::copy(base_.begin(), base_.end(), pointer_.begin());
    for (int v : host_set_) host_[v].reset();
    host_set_.clear();
  }

  // Value v reads the caller's floats (never written: inputs are read-only
  // to every step).
  void SetFloats(int v, const float* data) {
    pointer_[v] = const_cast<float*>(data);
  }

  void SetInput(int v, const TensorData& data) {
    if (data.dtype == DType::Float32()) {
      std::vector<float>& floats = owned_[v];
      floats.resize(std::max<size_t>(data.values.size(), 1));
      std::copy(data.values.begin(), data.values.end(), floats.begin());
      pointer_[v] = floats.data();
    } else {
      SetHost(v, data);
    }
  }

  // The float storage of value v; a storage outside the arena that the
  // call did not provide (a graph output's, for Run) is the workspace's own.
  float* FloatStorage(int v) {
    if (pointer_[v] != nullptr) return pointer_[v];
    int root = plan_.storage_of[v];
    if (root != v) {
      pointer_[v] = FloatStorage(root);
      return pointer_[v];
    }
    std::vector<float>& floats = owned_[v];
    if (floats.empty()) {
      floats.resize(std::max<int64_t>(graph_.value(v).type.NumElements(), 1));
    }
    pointer_[v] = floats.data();
    return pointer_[v];
  }

  // Value v as host data (converted from its float storage when it has one).
  const TensorData* HostData(int v) {
    if (v == kNoValue) return nullptr;
    const graph::Value& value = graph_.value(v);
    if (value.constant.has_value()) return &*value.constant;
    if (!host_[v].has_value()) {
      TensorData data(value.type.dtype, value.type.shape);
      const float* floats = FloatStorage(v);
      for (int64_t i = 0; i < data.size(); ++i) data.values[i] = floats[i];
      SetHost(v, std::move(data));
    }
    return &*host_[v];
  }

  void SetHostData(int v, TensorData data) {
    if (data.dtype == DType::Float32()) {
      float* floats = FloatStorage(v);
      for (int64_t i = 0; i < data.size(); ++i) {
        floats[i] = static_cast<float>(data.values[i]);
      }
    }
    SetHost(v, std::move(data));
  }

  void Alias(int to, int from) { pointer_[to] = FloatStorage(from); }

  // Room for a kernel step's argument pointers.
  std::vector<float*>& kernel_args() { return kernel_args_; }

 private:
  void SetHost(int v, TensorData data) {
    if (!host_[v].has_value()) host_set_.push_back(v);
    host_[v] = std::move(data);
  }

  const graph::Graph& graph_;
  const graph::MemoryPlan& plan_;
  HugePageBuffer arena_;
  // Per value: constants' floats and the arena's slots, fixed; and where
  // the current call finds each value (base_ plus what the call set).
  std::vector<float*> base_;
  std::vector<float*> pointer_;
  std::vector<std::optional<TensorData>> host_;
  std::vector<int> host_set_;  // the values host_ holds for this call
  std::vector<std::vector<float>> owned_;
  std::vector<float*> kernel_args_;
};

class Model::WorkspaceLease {
 public:
  explicit WorkspaceLease(const Model& model) : model_(model) {
    {
      std::lock_guard<std::mutex> lock(model.workspaces_mutex_);
      if (!model.idle_workspaces_.empty()) {
        workspace_ = std::move(model.idle_workspaces_.back());
        model.idle_workspaces_.pop_back();
      } else {
        ++model.workspaces_made_;
      }
    }
    if (workspace_ == nullptr) {
      workspace_ = std::make_unique<Workspace>(model.graph_, model.memory_plan_,
                                               model.constant_data_);
    }
  }
  ~WorkspaceLease() {
    std::lock_guard<std::mutex> lock(model_.workspaces_mutex_);
    model_.idle_workspaces_.push_back(std::move(workspace_));
  }
  WorkspaceLease(const WorkspaceLease&) = delete;
  WorkspaceLease& operator=(const WorkspaceLease&) = delete;

  Workspace& operator*() const { return *workspace_; }

 private:
  const Model& model_;
  std::unique_ptr<Workspace> workspace_;
};

Model::~Model() = default;

absl::StatusOr<std::unique_ptr<Model>> Model::Load(
    const std::string& path, const ModelOptions& options) {
  lathe::OnnxImportOptions import_options;
  import_options.input_shapes = options.input_shapes;
  absl::StatusOr<graph::Graph> imported =
      lathe::ImportOnnxModel(path, import_options);
  if (!imported.ok()) return imported.status();
  return FromGraph(*std::move(imported), options);
}

absl::StatusOr<std::unique_ptr<Model>> Model::FromGraph(
    graph::Graph graph, const ModelOptions& options) {
  std::unique_ptr<Model> model(new Model());
  absl::StatusOr<ModelPlan> plan =
      PlanModel(std::move(graph), options.input_values);
  if (!plan.ok()) return plan.status();
  absl::Status status = model->Prepare(*std::move(plan), options);
  if (!status.ok()) return status;
  return model;
}

absl::Status Model::Prepare(ModelPlan plan, const ModelOptions& options) {
  // 1. Passes, partition, memory plan (model_plan.h).
  graph_ = std::move(plan.graph);
  partition_ = std::move(plan.partition);
  memory_plan_ = std::move(plan.memory);
  inputs_ = std::move(plan.inputs);
  outputs_ = std::move(plan.outputs);
  stats_ = plan.stats;
  const std::vector<std::string>& workloads = plan.workloads;

  // 2. What the steps read as floats: kernel arguments must be float32;
  //    float32 constants read by kernels, views or as outputs are converted
  //    once.
  std::set<int> float_reads(graph_.outputs().begin(), graph_.outputs().end());
  // Those outside kernel arguments: outputs and views' inputs.
  std::set<int> other_float_reads = float_reads;
  for (const GraphStep& step : partition_.steps) {
    if (step.kind == GraphStep::Kind::kKernel) {
      float_reads.insert(step.args.begin(), step.args.end());
    } else if (step.kind == GraphStep::Kind::kAlias) {
      for (int n : step.nodes) {
        const graph::Node& node = graph_.nodes()[n];
        if (!node.inputs.empty() && node.inputs[0] != kNoValue) {
          float_reads.insert(node.inputs[0]);
          other_float_reads.insert(node.inputs[0]);
        }
      }
    }
  }
  std::vector<std::vector<float>> constant_floats(graph_.values().size());
  for (int v : float_reads) {
    const graph::Value& value = graph_.value(v);
    if (!value.constant.has_value() ||
        value.constant->dtype != DType::Float32()) {
      continue;
    }
    std::vector<float>& floats = constant_floats[v];
    floats.resize(std::max<int64_t>(value.constant->size(), 1));
    std::copy(value.constant->values.begin(), value.constant->values.end(),
              floats.begin());
    stats_.constant_bytes += value.constant->size() * 4;
  }

  // 3. One kernel per distinct workload, compiled side by side.
  Options db_options;
  db_options.compatible = options.compatible;
  db_options.pack_constants_ahead = true;
  absl::StatusOr<std::unique_ptr<Database>> db =
      Database::Open(options.db_path, db_options);
  if (!db.ok()) return db.status();
  std::vector<std::optional<absl::StatusOr<Kernel>>> compiled(workloads.size());
  BuildInParallel(workloads.size(), [&](size_t i) {
    compiled[i] = (*db)->GetKernel(workloads[i], options.target);
  });
  for (size_t i = 0; i < workloads.size(); ++i) {
    if (!compiled[i]->ok()) return compiled[i]->status();
    Kernel& kernel = **compiled[i];
    (kernel.origin().tuned() ? stats_.kernels_tuned : stats_.kernels_default)++;
    kernels_.emplace(workloads[i], std::move(kernel));
  }
  step_kernels_.assign(partition_.steps.size(), nullptr);
  for (size_t s = 0; s < partition_.steps.size(); ++s) {
    const GraphStep& step = partition_.steps[s];
    if (step.kind != GraphStep::Kind::kKernel) continue;
    const Kernel& kernel = kernels_.at(step.workload);
    if (kernel.num_args() != static_cast<int>(step.args.size())) {
      return absl::InternalError(
          absl::StrCat("kernel ", step.workload, " takes ", kernel.num_args(),
                       " arguments, the step gives ", step.args.size()));
    }
    step_kernels_[s] = &kernel;
  }

  // 4. Which outputs RunFloat's steps write in place: those whose storage
  //    starts at a step's result and is no other output's.
  std::map<int, int> outputs_of_root;
  for (int v : graph_.outputs()) ++outputs_of_root[memory_plan_.storage_of[v]];
  std::set<int> inputs(graph_.inputs().begin(), graph_.inputs().end());
  for (int v : graph_.outputs()) {
    int root = memory_plan_.storage_of[v];
    const graph::TensorType& type = graph_.value(v).type;
    bool in_place = type.dtype == DType::Float32() &&
                    !graph_.IsConstant(root) && inputs.count(root) == 0 &&
                    outputs_of_root[root] == 1 &&
                    memory_plan_.offsets[root] == graph::kNotPlanned &&
                    graph_.value(root).type.NumElements() == type.NumElements();
    output_roots_.push_back(in_place ? root : kNoValue);
  }
  // 5. Every constant a run reads lies in one block, in the order the steps
  //    first read it (HugePageBuffer says why): a constant input that a
  //    kernel takes packed is packed once, here, straight into the block
  //    for its step, and passed packed on every Run; the other float32
  //    constants are copied plain. A constant that only packed kernels read
  //    is not kept plain.
  struct Slot {
    int64_t offset = 0;
    const std::vector<float>* floats = nullptr;  // the plain constant
    const Kernel* kernel = nullptr;  // set: the slot holds it packed
    size_t pack_index = 0;           // in kernel->packed_inputs()
    float** pointer = nullptr;       // where the slot's address goes
  };
  std::vector<Slot> slots;
  int64_t bytes = 0;
  auto add_slot = [&](Slot slot, int64_t elements) {
    slot.offset = bytes;
    bytes += graph::AlignToArena(elements * int64_t{sizeof(float)});
    slots.push_back(slot);
  };
  constant_data_.assign(graph_.values().size(), nullptr);
  std::vector<bool> plain_placed(graph_.values().size(), false);
  auto add_plain = [&](int v) {
    if (plain_placed[v] || constant_floats[v].empty()) return;
    plain_placed[v] = true;
    add_slot({0, &constant_floats[v], nullptr, 0, &constant_data_[v]},
             static_cast<int64_t>(constant_floats[v].size()));
  };
  step_packed_args_.assign(partition_.steps.size(), {});
  for (size_t s = 0; s < partition_.steps.size(); ++s) {
    const GraphStep& step = partition_.steps[s];
    if (step.kind != GraphStep::Kind::kKernel) continue;
    const Kernel& kernel = kernels_.at(step.workload);
    const std::vector<PackedInputInfo>& packed = kernel.packed_inputs();
    // Room for every packed argument, so that the slots' pointers to its
    // entries stay valid.
    step_packed_args_[s].reserve(packed.size());
    for (size_t a = 0; a + 1 < step.args.size(); ++a) {
      auto info = std::find_if(packed.begin(), packed.end(),
                               [&](const PackedInputInfo& i) {
                                 return i.input == static_cast<int>(a);
                               });
      if (info == packed.end()) {
        add_plain(step.args[a]);
        continue;
      }
      const std::vector<float>& floats = constant_floats[step.args[a]];
      if (floats.empty()) {
        return absl::InternalError(
            absl::StrCat("kernel ", step.workload, " takes argument ", a,
                         " packed, but it is not a constant"));
      }
      step_packed_args_[s].push_back({a, nullptr});
      add_slot({0, &floats, &kernel, static_cast<size_t>(info - packed.begin()),
                &step_packed_args_[s].back().second},
               info->packed_elements);
    }
    if (step_packed_args_[s].size() != packed.size()) {
      return absl::InternalError(
          absl::StrCat("kernel ", step.workload, " takes ", packed.size(),
                       " inputs packed, the step has ",
                       step_packed_args_[s].size(), " of them"));
    }
  }
  for (int v : other_float_reads) add_plain(v);
  absl::StatusOr<HugePageBuffer> constants =
      HugePageBuffer::Allocate(static_cast<size_t>(bytes));
  if (!constants.ok()) return constants.status();
  constants_ = *std::move(constants);
  for (const Slot& slot : slots) {
    float* data = reinterpret_cast<float*>(constants_.data() + slot.offset);
    *slot.pointer = data;
    if (slot.kernel == nullptr) {
      std::memcpy(data, slot.floats->data(),
                  slot.floats->size() * sizeof(float));
    } else if (int rc = slot.kernel->Prepack(slot.pack_index,
                                             slot.floats->data(), data);
               rc != 0) {
      return absl::InternalError(
          absl::StrCat("prepack ", slot.pack_index, " of kernel ",
                       slot.kernel->workload(), " returned ", rc));
    }
  }
  stats_.distinct_kernels = static_cast<int>(kernels_.size());
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorData>> Model::Run(
    const std::vector<TensorData>& inputs,
    std::vector<double>* step_seconds) const {
  // 1. The inputs: count, dtype and shape.
  if (absl::Status st = CheckModelInputs(inputs_, inputs); !st.ok()) return st;

  // 2. The steps, on a workspace holding the inputs.
  WorkspaceLease lease(*this);
  Workspace& workspace = *lease;
  workspace.Begin();
  for (size_t i = 0; i < inputs.size(); ++i) {
    workspace.SetInput(graph_.inputs()[i], inputs[i]);
  }
  if (absl::Status st = RunSteps(workspace, step_seconds); !st.ok()) return st;

  // 3. The outputs.
  std::vector<TensorData> outputs;
  for (size_t i = 0; i < graph_.outputs().size(); ++i) {
    int v = graph_.outputs()[i];
    const graph::Value& value = graph_.value(v);
    if (value.type.dtype == DType::Float32() && !value.constant.has_value()) {
      TensorData data(value.type.dtype, value.type.shape);
      const float* floats = workspace.FloatStorage(v);
      for (int64_t e = 0; e < data.size(); ++e) data.values[e] = floats[e];
      outputs.push_back(std::move(data));
    } else {
      outputs.push_back(*workspace.HostData(v));
    }
  }
  return outputs;
}

absl::Status Model::RunFloat(absl::Span<const absl::Span<const float>> inputs,
                             absl::Span<const absl::Span<float>> outputs,
                             std::vector<double>* step_seconds) const {
  // 1. The buffers: count, dtype and size.
  auto check = [](const char* kind, const std::vector<ModelTensor>& expected,
                  size_t given_count, auto size_of) -> absl::Status {
    if (given_count != expected.size()) {
      std::string message = absl::StrCat("the model takes ", expected.size(),
                                         " ", kind, "(s), got ", given_count);
      if (given_count < expected.size()) {
        absl::StrAppend(&message, ": missing \"", expected[given_count].name,
                        "\" (", TensorTypeText(expected[given_count].type),
                        ")");
      }
      return absl::InvalidArgumentError(message);
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      const graph::TensorType& type = expected[i].type;
      if (type.dtype != DType::Float32()) {
        return absl::InvalidArgumentError(
            absl::StrCat(kind, " ", i, " \"", expected[i].name, "\" is ",
                         TensorTypeText(type),
                         ": RunFloat takes float32 tensors only (use "
                         "Run)"));
      }
      if (static_cast<int64_t>(size_of(i)) != type.NumElements()) {
        return absl::InvalidArgumentError(
            absl::StrCat(kind, " ", i, " \"", expected[i].name,
                         "\": ", size_of(i), " floats given for ",
                         TensorTypeText(type), " (", type.NumElements(), ")"));
      }
    }
    return absl::OkStatus();
  };
  if (absl::Status st = check("input", inputs_, inputs.size(),
                              [&](size_t i) { return inputs[i].size(); });
      !st.ok()) {
    return st;
  }
  if (absl::Status st = check("output", outputs_, outputs.size(),
                              [&](size_t i) { return outputs[i].size(); });
      !st.ok()) {
    return st;
  }

  // 2. The steps, reading the caller's inputs and writing straight into its
  //    outputs where the output's storage is its own.
  WorkspaceLease lease(*this);
  Workspace& workspace = *lease;
  workspace.Begin();
  for (size_t i = 0; i < inputs.size(); ++i) {
    workspace.SetFloats(graph_.inputs()[i], inputs[i].data());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (output_roots_[i] != kNoValue && !outputs[i].empty()) {
      workspace.SetFloats(output_roots_[i], outputs[i].data());
    }
  }
  if (absl::Status st = RunSteps(workspace, step_seconds); !st.ok()) return st;

  // 3. The outputs the steps did not write in place.
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].empty()) continue;
    const float* floats = workspace.FloatStorage(graph_.outputs()[i]);
    if (floats != outputs[i].data()) {
      std::memcpy(outputs[i].data(), floats, outputs[i].size() * sizeof(float));
    }
  }
  return absl::OkStatus();
}

int Model::workspaces() const {
  std::lock_guard<std::mutex> lock(workspaces_mutex_);
  return workspaces_made_;
}

absl::Status Model::RunSteps(Workspace& workspace,
                             std::vector<double>* step_seconds) const {
  if (!workspace.arena_ok()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", memory_plan_.peak_bytes,
                     " bytes for the intermediates"));
  }
  if (step_seconds != nullptr) {
    step_seconds->assign(partition_.steps.size(), 0.0);
  }
  static float empty_tensor = 0;
  std::vector<float*>& args = workspace.kernel_args();
  std::vector<const TensorData*> host_inputs;
  for (size_t s = 0; s < partition_.steps.size(); ++s) {
    const GraphStep& step = partition_.steps[s];
    std::chrono::steady_clock::time_point start;
    if (step_seconds != nullptr) start = std::chrono::steady_clock::now();
    switch (step.kind) {
      case GraphStep::Kind::kKernel: {
        int output = step.args.back();
        float* out = workspace.FloatStorage(output);
        if (graph_.value(output).type.NumElements() == 0) break;
        const size_t n = step.args.size();
        args.assign(n, nullptr);
        for (const auto& [a, packed] : step_packed_args_[s]) args[a] = packed;
        for (size_t a = 0; a + 1 < n; ++a) {
          if (args[a] != nullptr) continue;
          float* p = workspace.FloatStorage(step.args[a]);
          args[a] = p != nullptr ? p : &empty_tensor;
        }
        args[n - 1] = out;
        int rc = (*step_kernels_[s])(args.data());
        if (rc != 0) {
          return absl::InternalError(absl::StrCat(
              "kernel ", step.workload, " of node \"",
              graph_.nodes()[step.nodes.front()].name, "\" returned ", rc));
        }
        break;
      }
      case GraphStep::Kind::kHost:
        for (int n : step.nodes) {
          const graph::Node& node = graph_.nodes()[n];
          host_inputs.clear();
          for (int v : node.inputs)
            host_inputs.push_back(workspace.HostData(v));
          absl::StatusOr<std::vector<TensorData>> results =
              EvaluateHostNode(graph_, node, host_inputs);
          if (!results.ok()) return results.status();
          for (size_t o = 0; o < node.outputs.size(); ++o) {
            if (node.outputs[o] == kNoValue) continue;
            workspace.SetHostData(node.outputs[o], std::move((*results)[o]));
          }
        }
        break;
      case GraphStep::Kind::kAlias:
        for (int n : step.nodes) {
          const graph::Node& node = graph_.nodes()[n];
          int from = node.inputs[0];
          for (size_t o = 0; o < node.outputs.size(); ++o) {
            int to = node.outputs[o];
            if (to == kNoValue) continue;
            const graph::TensorType& type = graph_.value(to).type;
            if (o > 0) {
              // Dropout's mask in inference: all kept.
              TensorData mask(type.dtype, type.shape);
              std::fill(mask.values.begin(), mask.values.end(), 1.0);
              workspace.SetHostData(to, std::move(mask));
            } else if (type.dtype == DType::Float32()) {
              workspace.Alias(to, from);
            } else {
              TensorData view = *workspace.HostData(from);
              view.shape = type.shape;
              workspace.SetHostData(to, std::move(view));
            }
          }
        }
        break;
    }
    if (step_seconds != nullptr) (*step_seconds)[s] = SecondsSince(start);
  }
  return absl::OkStatus();
}

}  // namespace lathe::api
