#include "compiler/graph/kernel_partition.h"

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/graph/kernel_emitter.h"
#include "compiler/graph/op_registry.h"
#include "compiler/graph/ops/op_definition.h"
#include "compiler/workload/custom_workload.h"
#include "compiler/workload/flatten_dims.h"
#include "compiler/workload/flop_count.h"

namespace lathe::graph {
namespace {

// The workload of a group's text, its dimensions flattened
// (flatten_dims.h): the loops the tuner sees.
absl::StatusOr<Workload> FlatWorkload(const std::string& text,
                                      const std::string& dims) {
  absl::StatusOr<CustomDefinition> checked = ParseCustomDefinition(text, dims);
  if (!checked.ok()) return checked.status();
  absl::StatusOr<CustomDefinition> flat = FlattenDims(*checked);
  if (!flat.ok()) return flat.status();
  return MakeCustomWorkload(std::move(*flat));
}

class Partitioner {
 public:
  explicit Partitioner(const Graph& graph)
      : graph_(graph),
        consumers_(graph.Consumers()),
        is_output_(graph.values().size(), false),
        assigned_(graph.nodes().size(), false),
        ready_(graph.values().size(), false) {
    for (int v : graph.outputs()) is_output_[v] = true;
    for (int v : graph.inputs()) ready_[v] = true;
    for (size_t v = 0; v < graph.values().size(); ++v) {
      if (graph.values()[v].constant) ready_[v] = true;
    }
  }

  absl::StatusOr<KernelPartition> Run() {
    for (const Value& value : graph_.values()) {
      if (!value.typed && !value.dead) {
        return absl::FailedPreconditionError(absl::StrCat(
            "partition: value ", value.name, " has no inferred type"));
      }
    }
    KernelPartition partition;
    for (size_t i = 0; i < graph_.nodes().size(); ++i) {
      const Node& node = graph_.nodes()[i];
      if (node.dead || assigned_[i]) continue;
      const int index = static_cast<int>(i);
      GraphStep step;
      const OpDef* def = FindOpDef(node.op);
      if (def == nullptr) {
        return absl::UnimplementedError(absl::StrCat(
            "node ", node.name, ": operator ", node.op, " is not supported"));
      }
      if (def->role == FusionRole::kView && !SecondaryOutputsRead(node)) {
        step.kind = GraphStep::Kind::kAlias;
        step.nodes = {index};
      } else if (DeferPrologue(index)) {
        continue;  // emitted at the head of its reader's kernel
      } else if (Emittable(index)) {
        LATHE_ASSIGN_OR_RETURN(step, KernelStep(index));
      } else {
        step.kind = GraphStep::Kind::kHost;
        step.nodes = {index};
      }
      for (int n : step.nodes) {
        assigned_[n] = true;
        for (int out : graph_.nodes()[n].outputs) ready_[out] = true;
      }
      partition.steps.push_back(std::move(step));
    }
    return partition;
  }

 private:
  bool SecondaryOutputsRead(const Node& node) const {
    for (size_t o = 1; o < node.outputs.size(); ++o) {
      if (!consumers_[node.outputs[o]].empty() || is_output_[node.outputs[o]]) {
        return true;
      }
    }
    return false;
  }

  // The operand of node input j inside a group; `names` holds the tensor
  // names of values computed inside the group.
  KernelOperand Operand(const Node& node, size_t j,
                        const std::map<int, std::string>& names) const {
    KernelOperand operand;
    const int v = node.inputs[j];
    if (v == kNoValue) return operand;
    const Value& value = graph_.value(v);
    operand.present = true;
    operand.value = v;
    operand.type = value.type;
    auto it = names.find(v);
    if (it != names.end()) {
      operand.name = it->second;
    } else {
      operand.group_input = true;
    }
    if (value.constant) {
      operand.constant = &*value.constant;
      if (value.constant->size() == 1 &&
          std::isfinite(value.constant->values[0]) &&
          !value.type.dtype.is_bool()) {
        operand.literal = value.constant->values[0];
      }
    }
    return operand;
  }

  // Whether node i can be a kernel: one float32 output with elements, the
  // others unread, a fusion role that makes kernels, and an emitter that
  // accepts it alone.
  bool Emittable(int i) {
    auto cached = emittable_.find(i);
    if (cached != emittable_.end()) return cached->second;
    const Node& node = graph_.nodes()[i];
    const OpDef* def = FindOpDef(node.op);
    bool ok = def != nullptr && def->emit &&
              (def->role == FusionRole::kElementwise ||
               def->role == FusionRole::kAnchor ||
               def->role == FusionRole::kOwnKernel) &&
              !node.outputs.empty() && !SecondaryOutputsRead(node);
    if (ok) {
      const TensorType& out = graph_.value(node.outputs[0]).type;
      ok = out.dtype == DType::Float32() && out.NumElements() > 0;
    }
    for (size_t j = 0; ok && j < node.inputs.size(); ++j) {
      if (node.inputs[j] != kNoValue &&
          graph_.value(node.inputs[j]).type.NumElements() == 0) {
        ok = false;
      }
    }
    if (ok) {
      KernelEmitter trial;
      std::vector<KernelOperand> operands;
      for (size_t j = 0; j < node.inputs.size(); ++j) {
        operands.push_back(Operand(node, j, {}));
      }
      trial.BeginNode(std::move(operands), graph_.value(node.outputs[0]).type,
                      "out");
      ok = EmitNode(node, trial).ok();
    }
    emittable_[i] = ok;
    return ok;
  }

  // Whether node `first` starts a prologue, which is then assigned to its
  // reader (prologues_): a Transpose and the elementwise nodes that Follower
  // chains after it, when the chain's value has exactly one reader, a
  // MatMul or Gemm (whose emitters read operands unpadded, so a tensor of
  // the group will do), and is no graph output. KernelStep emits the chain
  // ahead of the product, which then reads the data through the transpose's
  // index map (the tuner may inline it into the operand read, or pack it)
  // where a kernel of its own would write the whole tensor and the product
  // read it back.
  bool DeferPrologue(int first) {
    if (graph_.nodes()[first].op != "Transpose" || !Emittable(first)) {
      return false;
    }
    std::vector<int> chain = {first};
    std::set<int> values = {graph_.nodes()[first].outputs[0]};
    ExtendChain(chain, values);
    const int v = graph_.nodes()[chain.back()].outputs[0];
    if (is_output_[v] || consumers_[v].size() != 1) return false;
    const int reader = consumers_[v][0];
    const std::string& op = graph_.nodes()[reader].op;
    if (assigned_[reader] || (op != "MatMul" && op != "Gemm") ||
        !Emittable(reader)) {
      return false;
    }
    for (int n : chain) {
      assigned_[n] = true;
      prologues_[reader].push_back(n);
    }
    return true;
  }

  // Appends to `group` (ending with the node whose output it holds last)
  // the nodes Follower admits one after another, their outputs to `values`.
  void ExtendChain(std::vector<int>& group, std::set<int>& values) {
    for (int next = Follower(group.back(), values); next >= 0;
         next = Follower(group.back(), values)) {
      group.push_back(next);
      values.insert(graph_.nodes()[next].outputs[0]);
    }
  }

  // The node that may join a group ending with node `tail`, or -1.
  int Follower(int tail, const std::set<int>& group_values) {
    const Node& node = graph_.nodes()[tail];
    if (ConvEndsKernel(graph_, node)) return -1;
    const int v = node.outputs[0];
    if (is_output_[v] || consumers_[v].size() != 1) return -1;
    const int next = consumers_[v][0];
    if (assigned_[next]) return -1;
    const OpDef* def = FindOpDef(graph_.nodes()[next].op);
    if (def == nullptr || def->role != FusionRole::kElementwise) return -1;
    if (!Emittable(next)) return -1;
    for (int in : graph_.nodes()[next].inputs) {
      if (in == kNoValue || in == v) continue;
      if (!ready_[in] && !group_values.count(in)) return -1;
    }
    return next;
  }

  absl::StatusOr<GraphStep> KernelStep(int first) {
    // 1. The group: the prologues deferred to it, then `first` and the
    //    elementwise nodes that follow.
    std::vector<int> group = prologues_[first];
    std::set<int> group_values;
    for (int n : group) group_values.insert(graph_.nodes()[n].outputs[0]);
    group.push_back(first);
    group_values.insert(graph_.nodes()[first].outputs[0]);
    ExtendChain(group, group_values);
    // 2. Emit its statements.
    KernelEmitter emitter;
    std::map<int, std::string> names;
    for (size_t k = 0; k < group.size(); ++k) {
      const Node& node = graph_.nodes()[group[k]];
      std::vector<KernelOperand> operands;
      for (size_t j = 0; j < node.inputs.size(); ++j) {
        operands.push_back(Operand(node, j, names));
      }
      const bool last = k + 1 == group.size();
      const std::string out_name = last ? "out" : emitter.NewTensor();
      emitter.BeginNode(std::move(operands), graph_.value(node.outputs[0]).type,
                        out_name);
      absl::Status status = EmitNode(node, emitter);
      if (!status.ok()) {
        return absl::InternalError(absl::StrCat(
            "fusion: node ", node.name, " (", node.op,
            ") failed to emit inside its group: ", status.message()));
      }
      names[node.outputs[0]] = out_name;
    }
    // 3. The workload: canonical form and FLOPs.
    const std::string text = emitter.Text();
    const std::string dims = emitter.DimsText();
    absl::StatusOr<Workload> workload = FlatWorkload(text, dims);
    if (!workload.ok()) {
      return absl::InternalError(absl::StrCat(
          "fusion: the group of node ", graph_.nodes()[first].name,
          " gives a workload the parser refuses: ", workload.status().message(),
          "; text: ", text, "; dims: ", dims));
    }
    GraphStep step;
    step.kind = GraphStep::Kind::kKernel;
    step.nodes = group;
    step.workload = workload->CanonicalForm();
    step.args = emitter.declared_values();
    step.args.push_back(graph_.nodes()[group.back()].outputs[0]);
    absl::StatusOr<int64_t> flops = FlopCount(*workload);
    step.flops = flops.ok() ? static_cast<double>(*flops) : 0.0;
    const OpDef* def = FindOpDef(graph_.nodes()[first].op);
    step.anchor =
        def->role == FusionRole::kElementwise ? "" : graph_.nodes()[first].op;
    return step;
  }

  const Graph& graph_;
  std::vector<std::vector<int>> consumers_;
  std::vector<bool> is_output_;
  std::vector<bool> assigned_;
  std::vector<bool> ready_;
  std::map<int, bool> emittable_;
  std::map<int, std::vector<int>> prologues_;  // reader -> its prologue nodes
};

}  // namespace

absl::StatusOr<KernelPartition> PartitionGraph(const Graph& graph) {
  return Partitioner(graph).Run();
}

}  // namespace lathe::graph
