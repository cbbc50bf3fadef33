#include "api/gpu_model.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "api/build_in_parallel.h"
#include "api/cuda_model_device.h"
#include "api/kernel_plan.h"
#include "api/model_plan.h"
#include "compiler/codegen/cuda/cuda_codegen.h"
#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/codegen/cuda/nvrtc_compiler.h"
#include "compiler/workload/spec.h"
#include "database/database.h"

namespace lathe::api {
namespace {

using graph::GraphStep;
using graph::kNoValue;

// Prefixes an error with what it concerns, keeping its code.
absl::Status Prefixed(const absl::Status& status, const std::string& prefix) {
  return absl::Status(status.code(),
                      absl::StrCat(prefix, ": ", status.message()));
}

bool IsFloat(const graph::Value& value) {
  return value.type.dtype == DType::Float32();
}

std::vector<float> Floats(const TensorData& data) {
  std::vector<float> floats(data.values.size());
  std::copy(data.values.begin(), data.values.end(), floats.begin());
  return floats;
}

}  // namespace

// One run's values on the host: the non-float32 ones, and the float32 ones
// a host step read or wrote (copied from or to the device).
class GpuModel::HostValues {
 public:
  HostValues(const graph::Graph& graph, ModelDevice& device,
             const std::vector<ModelDevice::Address>& address)
      : graph_(graph),
        device_(device),
        address_(address),
        host_(graph.values().size()) {}

  absl::StatusOr<const TensorData*> HostData(int v) {
    if (v == kNoValue) return nullptr;
    const graph::Value& value = graph_.value(v);
    if (value.constant.has_value()) return &*value.constant;
    if (!host_[v].has_value()) {
      if (!IsFloat(value) || address_[v] == 0) {
        return absl::InternalError(absl::StrCat(
            "value \"", value.name, "\" is read before any step gives it"));
      }
      std::vector<float> floats(static_cast<size_t>(value.type.NumElements()));
      if (!floats.empty()) {
        absl::Status copied = device_.CopyToHost(floats.data(), address_[v],
                                                 floats.size() * sizeof(float));
        if (!copied.ok()) return copied;
      }
      TensorData data(value.type.dtype, value.type.shape);
      std::copy(floats.begin(), floats.end(), data.values.begin());
      host_[v] = std::move(data);
    }
    return &*host_[v];
  }

  absl::Status SetHostData(int v, TensorData data) {
    if (IsFloat(graph_.value(v)) && address_[v] != 0 && data.size() > 0) {
      std::vector<float> floats = Floats(data);
      absl::Status copied = device_.CopyToDevice(address_[v], floats.data(),
                                                 floats.size() * sizeof(float));
      if (!copied.ok()) return copied;
    }
    host_[v] = std::move(data);
    return absl::OkStatus();
  }

 private:
  const graph::Graph& graph_;
  ModelDevice& device_;
  const std::vector<ModelDevice::Address>& address_;
  std::vector<std::optional<TensorData>> host_;
};

GpuModel::~GpuModel() {
  // The last caller may be another thread than the loader: the modules
  // unload and the buffers go back in the device's context.
  if (device_ != nullptr) device_->MakeCurrent().IgnoreError();
  modules_.clear();
  if (device_ != nullptr) {
    for (ModelDevice::Address a : allocations_) device_->Free(a);
  }
}

absl::StatusOr<std::unique_ptr<GpuModel>> GpuModel::FromGraph(
    graph::Graph graph, const GpuModelOptions& options) {
  std::unique_ptr<GpuModel> model(new GpuModel());
  absl::Status status = model->Prepare(std::move(graph), options);
  if (!status.ok()) return status;
  return model;
}

absl::Status GpuModel::Prepare(graph::Graph graph,
                               const GpuModelOptions& options) {
  // 1. The device and the target: the target's code must be the device's.
  device_ = options.device;
  if (device_ == nullptr) {
    absl::StatusOr<std::unique_ptr<CudaModelDevice>> opened =
        CudaModelDevice::Open(0);
    if (!opened.ok()) return opened.status();
    device_ = *std::move(opened);
  }
  if (absl::Status st = device_->MakeCurrent(); !st.ok()) return st;
  // Bare "cuda" on a GPU resolves as `lathe tune --target cuda` resolves
  // it (the device's limits), so that its records are this target's; on a
  // device given by the caller, it is the device's architecture.
  absl::string_view text = absl::StripAsciiWhitespace(options.target);
  absl::StatusOr<Target> target = text == "cuda" && options.device != nullptr
                                      ? cuda::ArchTarget(device_->arch())
                                      : cuda::ParseCudaTarget(options.target);
  if (!target.ok()) return target.status();
  target_ = *std::move(target);
  if (target_.cpu != device_->arch()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "target \"", target_.ToString(), "\" builds code for ", target_.cpu,
        ", and ", device_->name(), " is ", device_->arch(),
        " (give --target cuda for the device's own)"));
  }

  // 2. Passes, partition, memory plan (model_plan.h).
  absl::StatusOr<ModelPlan> plan =
      PlanModel(std::move(graph), options.input_values);
  if (!plan.ok()) return plan.status();
  graph_ = std::move(plan->graph);
  partition_ = std::move(plan->partition);
  memory_plan_ = std::move(plan->memory);
  inputs_ = std::move(plan->inputs);
  outputs_ = std::move(plan->outputs);
  stats_ = plan->stats;

  // 3. The kernels, one build per workload.
  if (absl::Status st = BuildKernels(options, plan->workloads); !st.ok()) {
    return st;
  }

  // 4. Device memory.
  if (absl::Status st = PlaceValues(); !st.ok()) return st;
  stats_.distinct_kernels = static_cast<int>(modules_.size());
  return absl::OkStatus();
}

absl::Status GpuModel::BuildKernels(const GpuModelOptions& options,
                                    const std::vector<std::string>& workloads) {
  std::unique_ptr<db::Database> db;
  if (!options.db_path.empty()) {
    db::OpenOptions open;
    open.mode = db::OpenOptions::Mode::kReadOnly;
    absl::StatusOr<std::unique_ptr<db::Database>> opened =
        db::Database::Open(options.db_path, open);
    if (!opened.ok()) return opened.status();
    db = *std::move(opened);
  }
  // Schedules and CUDA C, one workload after another (milliseconds each);
  // NVRTC, seconds each for a tiled kernel, side by side.
  std::vector<cuda::CudaModule> generated;
  for (const std::string& spec : workloads) {
    absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
    if (!workload.ok()) return Prefixed(workload.status(), spec);
    absl::StatusOr<KernelPlan> plan =
        PlanKernel(db.get(), *workload, target_,
                   options.compatible ? db::TargetMatching::kCompatible
                                      : db::TargetMatching::kExact);
    if (!plan.ok()) return plan.status();
    absl::StatusOr<cuda::CudaModule> module =
        cuda::GenerateCuda(plan->program.lowered, target_);
    if (!module.ok()) return Prefixed(module.status(), spec);
    (plan->origin.tuned() ? stats_.kernels_tuned : stats_.kernels_default)++;
    origins_.emplace(spec, std::move(plan->origin));
    generated.push_back(*std::move(module));
  }
  std::vector<std::optional<absl::StatusOr<cuda::CompiledCuda>>> compiled(
      workloads.size());
  BuildInParallel(workloads.size(), [&](size_t i) {
    compiled[i] =
        cuda::CompileCuda(generated[i].source, target_.cpu, /*cubin=*/true);
  });

  std::map<std::string, size_t> params_of;  // per workload
  for (size_t i = 0; i < workloads.size(); ++i) {
    if (!compiled[i]->ok()) {
      return Prefixed(compiled[i]->status(), workloads[i]);
    }
    absl::StatusOr<std::unique_ptr<ModelDevice::Module>> loaded =
        device_->Load(generated[i], (*compiled[i])->cubin);
    if (!loaded.ok()) return Prefixed(loaded.status(), workloads[i]);
    modules_.emplace(workloads[i], *std::move(loaded));
    params_of[workloads[i]] = std::count_if(
        generated[i].buffers.begin(), generated[i].buffers.end(),
        [](const cuda::DeviceBufferSpec& b) { return b.param_index >= 0; });
  }
  step_modules_.assign(partition_.steps.size(), nullptr);
  for (size_t s = 0; s < partition_.steps.size(); ++s) {
    const GraphStep& step = partition_.steps[s];
    if (step.kind != GraphStep::Kind::kKernel) continue;
    const size_t params = params_of.at(step.workload);
    if (params != step.args.size()) {
      return absl::InternalError(
          absl::StrCat("kernel ", step.workload, " takes ", params,
                       " arguments, the step gives ", step.args.size()));
    }
    step_modules_[s] = modules_.at(step.workload).get();
  }
  return absl::OkStatus();
}

absl::Status GpuModel::PlaceValues() {
  // The float32 values some step, the caller or a view reads or writes,
  // and the roots of their storages.
  std::set<int> used;
  auto use = [&](int v) {
    if (v == kNoValue || !IsFloat(graph_.value(v))) return;
    used.insert(v);
    used.insert(memory_plan_.storage_of[v]);
  };
  for (int v : graph_.inputs()) use(v);
  for (int v : graph_.outputs()) use(v);
  for (const GraphStep& step : partition_.steps) {
    for (int v : step.args) use(v);
    if (step.kind == GraphStep::Kind::kKernel) continue;
    for (int n : step.nodes) {
      for (int v : graph_.nodes()[n].inputs) {
        // A host step reads its constants where they are, on the host; a
        // view of a constant may be a kernel's argument.
        if (step.kind == GraphStep::Kind::kHost && graph_.IsConstant(v)) {
          continue;
        }
        use(v);
      }
      for (int v : graph_.nodes()[n].outputs) use(v);
    }
  }
  address_.assign(graph_.values().size(), 0);
  auto alloc = [&](int64_t bytes) -> absl::StatusOr<ModelDevice::Address> {
    absl::StatusOr<ModelDevice::Address> a =
        device_->Alloc(std::max<int64_t>(bytes, graph::kArenaAlignment));
    if (a.ok()) allocations_.push_back(*a);
    return a;
  };
  auto bytes_of = [&](int v) {
    return graph_.value(v).type.NumElements() * int64_t{sizeof(float)};
  };

  // The constants, in one block, copied once.
  int64_t constant_bytes = 0;
  std::vector<std::pair<int, int64_t>> constants;  // value, offset
  for (int v : used) {
    if (!graph_.IsConstant(v)) continue;
    constants.push_back({v, constant_bytes});
    constant_bytes += graph::AlignToArena(bytes_of(v));
    stats_.constant_bytes += bytes_of(v);  // as the CPU model counts them
  }
  if (!constants.empty()) {
    absl::StatusOr<ModelDevice::Address> block = alloc(constant_bytes);
    if (!block.ok()) return Prefixed(block.status(), "the model's constants");
    for (const auto& [v, offset] : constants) {
      address_[v] = *block + offset;
      std::vector<float> floats = Floats(*graph_.value(v).constant);
      if (floats.empty()) continue;
      absl::Status copied = device_->CopyToDevice(
          address_[v], floats.data(), floats.size() * sizeof(float));
      if (!copied.ok()) return Prefixed(copied, "the model's constants");
    }
  }

  // The arena, and a buffer of each storage outside it.
  // (Allocated whenever a value is planned, even of no bytes: address 0 is
  // no buffer.)
  ModelDevice::Address arena = 0;
  const bool planned = std::any_of(used.begin(), used.end(), [&](int v) {
    return memory_plan_.offsets[v] != graph::kNotPlanned;
  });
  if (planned) {
    absl::StatusOr<ModelDevice::Address> a = alloc(memory_plan_.peak_bytes);
    if (!a.ok()) return Prefixed(a.status(), "the intermediates");
    arena = *a;
  }
  for (int v : used) {
    if (memory_plan_.storage_of[v] != v || address_[v] != 0) continue;
    if (memory_plan_.offsets[v] != graph::kNotPlanned) {
      address_[v] = arena + memory_plan_.offsets[v];
      continue;
    }
    absl::StatusOr<ModelDevice::Address> a = alloc(bytes_of(v));
    if (!a.ok()) {
      return Prefixed(a.status(),
                      absl::StrCat("tensor \"", graph_.value(v).name, "\""));
    }
    address_[v] = *a;
  }
  for (int v : used) address_[v] = address_[memory_plan_.storage_of[v]];
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorData>> GpuModel::Run(
    const std::vector<TensorData>& inputs,
    std::vector<double>* step_seconds) const {
  if (absl::Status st = CheckModelInputs(inputs_, inputs); !st.ok()) return st;
  std::lock_guard<std::mutex> lock(run_mutex_);
  if (absl::Status st = device_->MakeCurrent(); !st.ok()) return st;
  HostValues run(graph_, *device_, address_);

  // 1. The inputs: float32 ones to the device, the others held here.
  for (size_t i = 0; i < inputs.size(); ++i) {
    int v = graph_.inputs()[i];
    if (IsFloat(graph_.value(v)) && address_[v] == 0) continue;  // unread
    if (absl::Status st = run.SetHostData(v, inputs[i]); !st.ok()) {
      return Prefixed(st, absl::StrCat("input \"", inputs_[i].name, "\""));
    }
  }
  // 2. The steps.
  if (absl::Status st = RunSteps(run, step_seconds); !st.ok()) return st;
  // 3. The outputs, from the device (or the host for the values held here).
  std::vector<TensorData> outputs;
  for (size_t i = 0; i < graph_.outputs().size(); ++i) {
    absl::StatusOr<const TensorData*> data = run.HostData(graph_.outputs()[i]);
    if (!data.ok()) {
      return Prefixed(data.status(),
                      absl::StrCat("output \"", outputs_[i].name, "\""));
    }
    outputs.push_back(**data);
  }
  return outputs;
}

absl::Status GpuModel::RunSteps(HostValues& run,
                                std::vector<double>* step_seconds) const {
  if (step_seconds != nullptr) {
    step_seconds->assign(partition_.steps.size(), 0.0);
  }
  std::vector<ModelDevice::Address> params;
  std::vector<const TensorData*> host_inputs;
  for (size_t s = 0; s < partition_.steps.size(); ++s) {
    const GraphStep& step = partition_.steps[s];
    const graph::Node& first = graph_.nodes()[step.nodes.front()];
    auto at_step = [&](const absl::Status& status) {
      return Prefixed(
          status,
          step.kind == GraphStep::Kind::kKernel
              ? absl::StrCat("kernel ", step.workload, " of node \"",
                             first.name, "\"")
              : absl::StrCat("node \"", first.name, "\" (", first.op, ")"));
    };
    const auto start = std::chrono::steady_clock::now();
    switch (step.kind) {
      case GraphStep::Kind::kKernel: {
        if (graph_.value(step.args.back()).type.NumElements() == 0) break;
        params.clear();
        for (int v : step.args) params.push_back(address_[v]);
        if (absl::Status st = step_modules_[s]->Launch(params); !st.ok()) {
          return at_step(st);
        }
        break;
      }
      case GraphStep::Kind::kHost:
        for (int n : step.nodes) {
          const graph::Node& node = graph_.nodes()[n];
          host_inputs.clear();
          for (int v : node.inputs) {
            absl::StatusOr<const TensorData*> data = run.HostData(v);
            if (!data.ok()) return at_step(data.status());
            host_inputs.push_back(*data);
          }
          absl::StatusOr<std::vector<TensorData>> results =
              EvaluateHostNode(graph_, node, host_inputs);
          if (!results.ok()) return results.status();
          for (size_t o = 0; o < node.outputs.size(); ++o) {
            if (node.outputs[o] == kNoValue) continue;
            absl::Status set =
                run.SetHostData(node.outputs[o], std::move((*results)[o]));
            if (!set.ok()) return at_step(set);
          }
        }
        break;
      case GraphStep::Kind::kAlias:
        // A float32 view shares its input's bytes (PlaceValues); other
        // views and Dropout's mask are the host's.
        for (int n : step.nodes) {
          const graph::Node& node = graph_.nodes()[n];
          for (size_t o = 0; o < node.outputs.size(); ++o) {
            int to = node.outputs[o];
            if (to == kNoValue) continue;
            const graph::TensorType& type = graph_.value(to).type;
            if (o > 0) {
              TensorData mask(type.dtype, type.shape);  // all kept
              std::fill(mask.values.begin(), mask.values.end(), 1.0);
              absl::Status set = run.SetHostData(to, std::move(mask));
              if (!set.ok()) return at_step(set);
            } else if (type.dtype != DType::Float32()) {
              absl::StatusOr<const TensorData*> from =
                  run.HostData(node.inputs[0]);
              if (!from.ok()) return at_step(from.status());
              TensorData view = **from;
              view.shape = type.shape;
              absl::Status set = run.SetHostData(to, std::move(view));
              if (!set.ok()) return at_step(set);
            }
          }
        }
        break;
    }
    if (step_seconds != nullptr) {
      if (absl::Status st = device_->Synchronize(); !st.ok()) {
        return at_step(st);
      }
      (*step_seconds)[s] = std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - start)
                               .count();
    }
  }
  // A kernel's fault surfaces at the next wait: say so, since the failing
  // kernel cannot be named without timing each step.
  if (absl::Status st = device_->Synchronize(); !st.ok()) {
    return Prefixed(st,
                    "a kernel of the run (step times, as `lathe bench` takes "
                    "them, wait after each step and name it)");
  }
  return absl::OkStatus();
}

}  // namespace lathe::api
