#include "compiler/graph/op_registry.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/graph/kernel_emitter.h"
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

const std::map<std::string, OpDef>& Registry() {
  static const std::map<std::string, OpDef>* registry = [] {
    auto* map = new std::map<std::string, OpDef>;
    for (auto family :
         {UnaryOps,     BinaryOps,       ClipOps,          WhereOps,
          CastOps,      ConvOps,         ConvTransposeOps, GemmOps,
          MatMulOps,    PoolOps,         BatchNormOps,     SoftmaxOps,
          LayerNormOps, ReduceOps,       TransposeOps,     ViewOps,
          ConcatOps,    SplitOps,        SliceOps,         GatherOps,
          PadOps,       ExpandOps,       ConstantOps,      ArgReduceOps,
          ModOps,       TriluOps,        IsNanInfOps,      CumSumOps,
          TileOps,      DepthToSpaceOps, LossOps,          HardmaxOps,
          ScatterOps,   OneHotOps,       WinogradOps}) {
      for (OpDef& def : family()) {
        std::string op = def.op;
        (*map)[op] = std::move(def);
      }
    }
    return map;
  }();
  return *registry;
}

}  // namespace

const OpDef* FindOpDef(const std::string& op) {
  auto it = Registry().find(op);
  return it == Registry().end() ? nullptr : &it->second;
}

std::vector<std::string> SupportedOps() {
  std::vector<std::string> ops;
  for (const auto& [op, def] : Registry()) {
    if (def.onnx) ops.push_back(op);
  }
  return ops;
}

absl::Status CheckSupported(const std::string& op) {
  const OpDef* def = FindOpDef(op);
  if (def != nullptr && def->onnx) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(
      "operator ", op,
      def != nullptr ? " is Lathe's own, made by its graph passes, not ONNX's"
                     : " is not supported"));
}

absl::StatusOr<std::vector<TensorType>> InferNodeTypes(const Graph& graph,
                                                       const Node& node) {
  const OpDef* def = FindOpDef(node.op);
  if (def == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        "node ", node.name, ": operator ", node.op, " is not supported"));
  }
  for (int in : node.inputs) {
    if (in == kNoValue) continue;
    if (!graph.value(in).typed) {
      return NodeError(node, absl::StrCat("input ", graph.value(in).name,
                                          " has no known type"));
    }
  }
  absl::StatusOr<std::vector<TensorType>> types = def->infer(graph, node);
  if (!types.ok()) return types.status();
  if (types->size() > node.outputs.size()) types->resize(node.outputs.size());
  for (const TensorType& type : *types) {
    absl::Status shape_ok = CheckShape(node, type.shape);
    if (!shape_ok.ok()) return shape_ok;
  }
  return types;
}

absl::StatusOr<std::vector<TensorData>> EvaluateNode(
    const Node& node, const std::vector<const TensorData*>& inputs) {
  const OpDef* def = FindOpDef(node.op);
  if (def == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        "node ", node.name, ": operator ", node.op, " is not supported"));
  }
  if (inputs.size() != node.inputs.size()) {
    return NodeError(node, absl::StrCat("evaluated with ", inputs.size(),
                                        " inputs, has ", node.inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (node.inputs[i] != kNoValue && inputs[i] == nullptr) {
      return NodeError(node, absl::StrCat("input ", i, " has no data"));
    }
  }
  return def->eval(node, inputs);
}

absl::Status EmitNode(const Node& node, KernelEmitter& emitter) {
  const OpDef* def = FindOpDef(node.op);
  if (def == nullptr || !def->emit) return NoKernel(node, "no emitter");
  return def->emit(node, emitter);
}

}  // namespace lathe::graph
