#include "compiler/frontend/onnx/graph_builder.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/node_conversion.h"
#include "compiler/frontend/onnx/tensor_proto_conversion.h"

namespace lathe::onnx_frontend {

GraphBuilder::GraphBuilder(const onnx::ModelProto& model, int64_t opset)
    : model_(model), opset_(opset) {
  const onnx::GraphProto& graph = model.graph();
  for (const auto& info : graph.value_info())
    types_[info.name()] = &info.type();
  for (const auto& info : graph.output()) types_[info.name()] = &info.type();
  for (const auto& info : graph.input()) types_[info.name()] = &info.type();
}

absl::StatusOr<std::pair<graph::TensorType, bool>> GraphBuilder::TypeOf(
    const std::string& onnx_name) const {
  graph::TensorType type;
  auto found = types_.find(onnx_name);
  if (found == types_.end()) return std::make_pair(type, false);
  const onnx::TypeProto& proto = *found->second;
  const std::string what = absl::StrCat("value \"", onnx_name, "\"");
  if (proto.value_case() != onnx::TypeProto::kTensorType) {
    if (proto.value_case() == onnx::TypeProto::VALUE_NOT_SET) {
      return std::make_pair(type, false);
    }
    return absl::UnimplementedError(
        absl::StrCat(what,
                     ": not a tensor (sequences, maps and optionals are not "
                     "supported)"));
  }
  const onnx::TypeProto::Tensor& tensor = proto.tensor_type();
  if (tensor.elem_type() == onnx::TensorProto::UNDEFINED) {
    return std::make_pair(type, false);
  }
  LATHE_ASSIGN_OR_RETURN(type.dtype, DTypeFromOnnx(tensor.elem_type(), what));
  if (!tensor.has_shape()) return std::make_pair(type, false);
  for (const auto& dim : tensor.shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0) {
      type.shape.clear();
      return std::make_pair(type, false);
    }
    type.shape.push_back(dim.dim_value());
  }
  LATHE_RETURN_IF_ERROR(BoundedElementCount(type.shape, what).status());
  return std::make_pair(type, true);
}

absl::StatusOr<int> GraphBuilder::Lookup(const std::string& onnx_name,
                                         const std::string& node) const {
  if (onnx_name.empty()) return graph::kNoValue;
  auto found = ids_.find(onnx_name);
  if (found == ids_.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node ", node, ": input \"", onnx_name,
        "\" is neither a graph input, an initializer nor an earlier output"));
  }
  return found->second;
}

absl::StatusOr<int> GraphBuilder::DefineOutput(const std::string& onnx_name) {
  LATHE_ASSIGN_OR_RETURN(auto type, TypeOf(onnx_name));
  int id = graph_.AddValue(onnx_name, type.first);
  graph_.value(id).typed = type.second;
  ids_[onnx_name] = id;
  return id;
}

int GraphBuilder::NewValue(const std::string& base) {
  int id = graph_.AddValue(base, graph::TensorType{});
  graph_.value(id).typed = false;
  return id;
}

int GraphBuilder::NewConstant(const std::string& base, TensorData data) {
  return graph_.AddConstant(base, std::move(data));
}

int GraphBuilder::NewInt64Constant(const std::string& base,
                                   const std::vector<int64_t>& values) {
  TensorData data(DType::Int64(), {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) {
    data.values[i] = static_cast<double>(values[i]);
  }
  return NewConstant(base, std::move(data));
}

std::optional<graph::TensorType> GraphBuilder::StaticType(int value) const {
  if (value == graph::kNoValue) return std::nullopt;
  const graph::Value& v = graph_.value(value);
  if (!v.typed) return std::nullopt;
  return v.type;
}

std::string GraphBuilder::UniqueNodeName(const std::string& name,
                                         const std::string& op) {
  std::string candidate = name;
  const std::string base = name.empty() ? op : name;
  for (int suffix = 0; candidate.empty() || node_names_.count(candidate) != 0;
       ++suffix) {
    candidate = absl::StrCat(base, "_", suffix);
  }
  node_names_.insert(candidate);
  return candidate;
}

absl::StatusOr<graph::Graph> GraphBuilder::Build() {
  const onnx::GraphProto& graph = model_.graph();
  // 1. Initializers are constants, whether or not they are also listed as
  //    graph inputs (older exporters list them; they are weights).
  for (const onnx::TensorProto& initializer : graph.initializer()) {
    LATHE_ASSIGN_OR_RETURN(
        TensorData data,
        TensorFromProto(initializer, absl::StrCat("initializer \"",
                                                  initializer.name(), "\"")));
    ids_[initializer.name()] =
        graph_.AddConstant(initializer.name(), std::move(data));
  }
  // 2. The remaining inputs, with the static shapes shape_binding.h gave.
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (ids_.count(input.name()) != 0) continue;
    LATHE_ASSIGN_OR_RETURN(auto type, TypeOf(input.name()));
    if (!type.second) {
      return absl::InvalidArgumentError(
          absl::StrCat("input \"", input.name(), "\": no static type"));
    }
    int id = graph_.AddValue(input.name(), type.first);
    ids_[input.name()] = id;
    graph_.AddInput(id);
  }
  // 3. Nodes, in the model's (topological) order.
  for (int i = 0; i < graph.node_size(); ++i) {
    LATHE_RETURN_IF_ERROR(ConvertNode(graph.node(i), *this));
  }
  // 4. Outputs.
  for (const onnx::ValueInfoProto& output : graph.output()) {
    LATHE_ASSIGN_OR_RETURN(int id, Lookup(output.name(), "(graph output)"));
    if (id == graph::kNoValue) {
      return absl::InvalidArgumentError("a graph output has an empty name");
    }
    graph_.AddOutput(id);
  }
  absl::Status verified = graph_.Verify();
  if (!verified.ok()) {
    return absl::InternalError(
        absl::StrCat("the imported graph is malformed: ", verified.message()));
  }
  return std::move(graph_);
}

}  // namespace lathe::onnx_frontend
