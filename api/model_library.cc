#include "api/model_library.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/llvm/jit.h"
#include "compiler/frontend/onnx/onnx_importer.h"
#include "compiler/graph/graph.h"
#include "compiler/graph/kernel_partition.h"
#include "compiler/graph/memory_plan.h"
#include "compiler/graph/pipeline.h"
#include "compiler/workload/spec.h"

namespace lathe::api {
namespace {

using graph::GraphStep;
using graph::kNoValue;

// The most host steps an error names before "and N more".
constexpr size_t kHostStepsNamed = 5;

std::string StepText(const graph::Graph& g, const GraphStep& step) {
  std::vector<std::string> nodes;
  for (int n : step.nodes) {
    const graph::Node& node = g.nodes()[n];
    nodes.push_back(absl::StrCat("\"", node.name, "\" (", node.op, ")"));
  }
  return absl::StrJoin(nodes, ", ");
}

// Where the values' storages live in the entry (model_entry.h).
class Storages {
 public:
  Storages(const graph::Graph& g, const graph::MemoryPlan& plan,
           std::vector<std::vector<float>>* constants, ModelEntry* entry)
      : graph_(g), plan_(plan), constants_(constants), entry_(entry) {}

  absl::StatusOr<EntryBuffer> Of(int v) {
    const graph::Value& value = graph_.value(v);
    if (value.type.NumElements() == 0) return Constant(kNoValue);
    const int root = plan_.storage_of[v];
    if (graph_.IsConstant(root)) return Constant(root);
    const std::vector<int>& inputs = graph_.inputs();
    if (auto it = std::find(inputs.begin(), inputs.end(), root);
        it != inputs.end()) {
      return EntryBuffer{EntryBuffer::Kind::kInput, it - inputs.begin()};
    }
    if (plan_.offsets[root] != graph::kNotPlanned) {
      return EntryBuffer{EntryBuffer::Kind::kArena, plan_.offsets[root]};
    }
    const std::vector<int>& outputs = graph_.outputs();
    for (size_t o = 0; o < outputs.size(); ++o) {
      if (plan_.storage_of[outputs[o]] == root) {
        return EntryBuffer{EntryBuffer::Kind::kOutput, static_cast<int64_t>(o)};
      }
    }
    return absl::InternalError(
        absl::StrCat("value \"", value.name,
                     "\" has no storage: not in the memory plan, not an "
                     "input, a constant or an output"));
  }

  // The constant value v packed by `prepack` (packed_elements floats), an
  // embedded constant of its own, added on first use for each prepack.
  absl::StatusOr<EntryBuffer> Packed(int v, const CompiledKernel& prepack,
                                     int64_t packed_elements) {
    const graph::Value& value = graph_.value(v);
    const int root = plan_.storage_of[v];
    if (value.type.NumElements() == 0 || !graph_.IsConstant(root)) {
      return absl::InternalError(
          absl::StrCat("value \"", value.name, "\" is taken packed by ",
                       prepack.name(), ", but it is not a constant"));
    }
    auto [it, fresh] = packed_index_.emplace(
        std::make_pair(root, prepack.name()), entry_->constants.size());
    if (fresh) {
      const TensorData& data = *graph_.value(root).constant;
      std::vector<float> original(data.values.begin(), data.values.end());
      // Elements no element of the original maps to (a split layout's
      // padding) are never read; zeros keep the bytes the same.
      std::vector<float>& packed =
          constants_->emplace_back(std::max<int64_t>(packed_elements, 1), 0.0f);
      if (absl::Status st = prepack.Run({original.data(), packed.data()});
          !st.ok()) {
        return st;
      }
      entry_->constants.push_back(
          {absl::StrCat(graph_.value(root).name, " packed by ", prepack.name()),
           nullptr, static_cast<int64_t>(packed.size())});
    }
    return EntryBuffer{EntryBuffer::Kind::kConstant,
                       static_cast<int64_t>(it->second)};
  }

 private:
  // The embedded constant of value v (kNoValue: one zero float, for an
  // empty tensor), added on first use.
  EntryBuffer Constant(int v) {
    auto [it, fresh] = index_.emplace(v, entry_->constants.size());
    if (fresh) {
      std::vector<float>& floats = constants_->emplace_back();
      if (v == kNoValue) {
        floats.assign(1, 0.0f);
      } else {
        const TensorData& data = *graph_.value(v).constant;
        floats.resize(std::max<int64_t>(data.size(), 1));
        std::copy(data.values.begin(), data.values.end(), floats.begin());
      }
      entry_->constants.push_back(
          {v == kNoValue ? "empty" : graph_.value(v).name, nullptr,
           static_cast<int64_t>(floats.size())});
    }
    return EntryBuffer{EntryBuffer::Kind::kConstant,
                       static_cast<int64_t>(it->second)};
  }

  const graph::Graph& graph_;
  const graph::MemoryPlan& plan_;
  std::vector<std::vector<float>>* constants_;
  ModelEntry* entry_;
  std::map<int, size_t> index_;
  std::map<std::pair<int, std::string>, size_t> packed_index_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ModelLibraryPlan>> ModelLibraryPlan::Make(
    const std::string& onnx_path, db::Database* db, const Target& target,
    const ModelLibraryOptions& options) {
  if (!IsCIdentifier(options.function_name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "function name \"", options.function_name,
        "\" is not a C identifier free to name the model's entry (keywords, "
        "main, _X..., __... and lathe, lathe_... are taken)"));
  }
  // 1. The graph as Model::Load makes it.
  OnnxImportOptions import_options;
  import_options.input_shapes = options.input_shapes;
  absl::StatusOr<graph::Graph> imported =
      ImportOnnxModel(onnx_path, import_options);
  if (!imported.ok()) return imported.status();
  graph::Graph g = *std::move(imported);
  absl::StatusOr<graph::KernelPartition> partition =
      graph::RunPassesAndPartition(g);
  if (!partition.ok()) return partition.status();
  absl::StatusOr<graph::MemoryPlan> memory = graph::PlanMemory(g, *partition);
  if (!memory.ok()) return memory.status();
  const std::string model = std::filesystem::path(onnx_path).filename();

  // 2. What a library cannot run.
  std::vector<std::string> host_steps;
  for (const GraphStep& step : partition->steps) {
    if (step.kind == GraphStep::Kind::kHost)
      host_steps.push_back(StepText(g, step));
  }
  if (!host_steps.empty()) {
    const size_t total = host_steps.size();
    const size_t named = std::min(total, kHostStepsNamed);
    std::string more =
        total > named ? absl::StrCat(" and ", total - named, " more") : "";
    host_steps.resize(named);
    return absl::FailedPreconditionError(absl::StrCat(
        model, ": a model library runs kernels only, and ", total,
        " step(s) after folding run on the host: ",
        absl::StrJoin(host_steps, "; "), more,
        " (`lathe graph` shows them; `lathe run` runs such a model)"));
  }
  std::unique_ptr<ModelLibraryPlan> plan(new ModelLibraryPlan());
  ModelLibrary& library = plan->library_;
  library.model_name = model;
  for (auto [list, what, tensors] :
       {std::make_tuple(&g.inputs(), "input", &library.inputs),
        std::make_tuple(&g.outputs(), "output", &library.outputs)}) {
    for (size_t i = 0; i < list->size(); ++i) {
      const graph::Value& value = g.value((*list)[i]);
      if (value.type.dtype != DType::Float32()) {
        return absl::FailedPreconditionError(absl::StrCat(
            model, ": ", what, " ", i, " \"", value.name, "\" is ",
            TensorTypeText(value.type),
            ": a model library takes and gives float32 tensors only"));
      }
      tensors->push_back({value.name, value.type.shape});
    }
  }

  // 3. One plan per distinct workload, in order of first use.
  std::map<std::string, int> task_of;
  for (const GraphStep& step : partition->steps) {
    if (step.kind != GraphStep::Kind::kKernel) continue;
    auto [it, fresh] =
        task_of.emplace(step.workload, static_cast<int>(plan->tasks_.size()));
    if (!fresh) {
      ++plan->tasks_[it->second].calls;
      continue;
    }
    absl::StatusOr<Workload> workload = ParseWorkloadSpec(step.workload);
    if (!workload.ok()) {
      return absl::InternalError(absl::StrCat("workload ", step.workload, ": ",
                                              workload.status().message()));
    }
    absl::StatusOr<KernelPlan> kernel =
        PlanKernel(db, *workload, target, options.matching);
    if (!kernel.ok()) return kernel.status();
    ModelLibraryTask task{step.workload, 1, *std::move(kernel), {}, {}};
    task.emitted = task.plan.program;
    if (!task.plan.program.scheduled.layout_free_inputs.empty()) {
      absl::StatusOr<PrepackSplit> split =
          SplitPrepack(task.plan.program.scheduled);
      if (!split.ok()) {
        return absl::Status(
            split.status().code(),
            absl::StrCat("workload ", step.workload,
                         ": prepack split: ", split.status().message()));
      }
      task.emitted.lowered = std::move(split->main);
      task.packed = std::move(split->packed);
    }
    plan->tasks_.push_back(std::move(task));
  }
  // The prepacks, compiled for this machine to pack the constants now.
  std::vector<std::vector<CompiledKernel>> prepacks(plan->tasks_.size());
  for (size_t k = 0; k < plan->tasks_.size(); ++k) {
    const ModelLibraryTask& task = plan->tasks_[k];
    if (task.packed.empty()) continue;
    absl::StatusOr<Target> host = ParseTarget("host");
    if (!host.ok()) return host.status();
    host->num_threads = 1;
    for (size_t i = 0; i < task.packed.size(); ++i) {
      CodegenOptions codegen;
      codegen.function_name =
          absl::StrCat(options.function_name, "_kernel_", k, "_prepack", i);
      absl::StatusOr<CompiledKernel> prepack =
          Compile(task.packed[i].prepack, *host, codegen);
      if (!prepack.ok()) {
        return absl::Status(prepack.status().code(),
                            absl::StrCat("workload ", task.workload,
                                         ": code generation of a prepack: ",
                                         prepack.status().message()));
      }
      prepacks[k].push_back(*std::move(prepack));
    }
  }
  for (size_t k = 0; k < plan->tasks_.size(); ++k) {
    const ModelLibraryTask& task = plan->tasks_[k];
    LibraryKernel kernel;
    kernel.workload = &task.plan.workload;
    kernel.kernel = &task.emitted;
    kernel.function_name = absl::StrCat(options.function_name, "_kernel_", k);
    kernel.origin =
        task.plan.origin.tuned()
            ? absl::StrCat("database record ", task.plan.origin.record_id)
            : "default";
    library.kernels.push_back(std::move(kernel));
    library.kernel_calls.push_back(task.calls);
    std::vector<ModelPackedInput>& packed =
        library.kernel_packed_inputs.emplace_back();
    for (const PackedInput& p : task.packed)
      packed.push_back({p.input, p.original->shape, p.packed->shape});
  }

  // 4. The entry: the kernel steps' calls, then the outputs' copies.
  ModelEntry& entry = library.entry;
  entry.function_name = options.function_name;
  entry.num_inputs = static_cast<int>(g.inputs().size());
  entry.num_outputs = static_cast<int>(g.outputs().size());
  entry.arena_bytes = memory->peak_bytes;
  Storages storages(g, *memory, &plan->constants_, &entry);
  for (const GraphStep& step : partition->steps) {
    if (step.kind != GraphStep::Kind::kKernel) continue;
    // As Model::Run: a kernel whose output is empty does not run.
    if (g.value(step.args.back()).type.NumElements() == 0) continue;
    EntryCall call;
    call.kernel = task_of.at(step.workload);
    const std::vector<PackedInput>& packed = plan->tasks_[call.kernel].packed;
    for (size_t a = 0; a < step.args.size(); ++a) {
      const int v = step.args[a];
      if (v == kNoValue || g.value(v).type.dtype != DType::Float32()) {
        return absl::InternalError(absl::StrCat(
            "kernel ", step.workload, " has an argument that is not float32"));
      }
      // A constant the kernel takes packed: passed in the packed layout.
      size_t p = 0;
      while (p < packed.size() && packed[p].input != a) ++p;
      absl::StatusOr<EntryBuffer> buffer =
          p < packed.size() ? storages.Packed(v, prepacks[call.kernel][p],
                                              packed[p].packed->NumElements())
                            : storages.Of(v);
      if (!buffer.ok()) return buffer.status();
      call.args.push_back(*buffer);
    }
    entry.calls.push_back(std::move(call));
  }
  for (size_t o = 0; o < g.outputs().size(); ++o) {
    const int v = g.outputs()[o];
    absl::StatusOr<EntryBuffer> from = storages.Of(v);
    if (!from.ok()) return from.status();
    if (from->kind == EntryBuffer::Kind::kOutput &&
        from->index == static_cast<int64_t>(o)) {
      continue;
    }
    const int64_t elements = g.value(v).type.NumElements();
    if (elements == 0) continue;
    entry.copies.push_back({static_cast<int>(o), *from, elements});
  }
  // The constants' vectors are complete: point at them.
  for (size_t c = 0; c < entry.constants.size(); ++c)
    entry.constants[c].data = plan->constants_[c].data();
  return plan;
}

}  // namespace lathe::api
