#include "compiler/frontend/onnx/model_file.h"

#include <exception>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/bounded_file.h"
#include "compiler/frontend/onnx/tensor_proto_conversion.h"
#include "compiler/graph/op_registry.h"
#include "onnx/checker.h"
#include "onnx/defs/schema.h"

namespace lathe::onnx_frontend {
namespace {

bool IsDefaultDomain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

std::string NodeName(const onnx::NodeProto& node, int index) {
  return node.name().empty() ? absl::StrCat("#", index) : node.name();
}

// Nodes of other domains (contrib ops, training, ML) are refused by name.
absl::Status CheckDomains(const onnx::GraphProto& graph,
                          const std::string& path) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (!IsDefaultDomain(node.domain())) {
      return absl::UnimplementedError(
          absl::StrCat(path, ": node ", NodeName(node, i), " (", node.op_type(),
                       ") is in domain \"", node.domain(),
                       "\"; only the default ONNX domain is supported"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> DefaultOpset(const onnx::ModelProto& model,
                                     const std::string& path) {
  int64_t opset = 0;
  for (const auto& import : model.opset_import()) {
    if (IsDefaultDomain(import.domain())) opset = import.version();
  }
  if (opset <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": the model imports no opset of the default ONNX domain"));
  }
  if (opset > kMaxOpset) {
    return absl::UnimplementedError(absl::StrCat(
        path, ": opset ", opset, " of the default domain is not supported (",
        kMinOpset, " to ", kMaxOpset, ")"));
  }
  return opset;
}

// A model below opset 11 is read as opset 11 when each of its operators is
// the same at both (ONNX versions an operator only when it changes);
// otherwise it is refused naming the first node that differs.
absl::Status CheckOlderOpset(const onnx::GraphProto& graph, int64_t opset,
                             const std::string& path) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    const onnx::OpSchema* declared =
        onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset));
    const onnx::OpSchema* minimum = onnx::OpSchemaRegistry::Schema(
        node.op_type(), static_cast<int>(kMinOpset));
    if (declared == nullptr || minimum == nullptr ||
        declared->since_version() != minimum->since_version()) {
      return absl::UnimplementedError(absl::StrCat(
          path, ": opset ", opset, " of the default domain is not supported (",
          kMinOpset, " to ", kMaxOpset, "): node ", NodeName(node, i), " (",
          node.op_type(), ") differs from its opset-", kMinOpset, " form"));
    }
  }
  return absl::OkStatus();
}

// Bounds and type checks of a tensor in the model, before the checker or
// any conversion looks at its data.
absl::Status CheckTensor(const onnx::TensorProto& tensor,
                         const std::string& what, const std::string& path) {
  auto count = ValidateTensorProto(tensor, what);
  if (!count.ok()) {
    return absl::Status(count.status().code(),
                        absl::StrCat(path, ": ", count.status().message()));
  }
  return absl::OkStatus();
}

absl::Status CheckNodes(const onnx::GraphProto& graph, int64_t opset,
                        const std::string& path) {
  int index = 0;
  for (const onnx::NodeProto& node : graph.node()) {
    const std::string name = NodeName(node, index);
    absl::Status supported = graph::CheckSupported(node.op_type());
    if (!supported.ok()) {
      return absl::UnimplementedError(
          absl::StrCat(path, ": node ", name, ": operator ", node.op_type(),
                       " (opset ", opset, ") is not supported"));
    }
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_t()) {
        LATHE_RETURN_IF_ERROR(CheckTensor(
            attribute.t(),
            absl::StrCat("node ", name, " attribute ", attribute.name()),
            path));
      }
    }
    ++index;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LoadedModel> LoadOnnxModel(const std::string& path,
                                          int64_t max_file_bytes) {
  auto contents = ReadBoundedFile(path, max_file_bytes);
  if (!contents.ok()) return contents.status();
  if (contents->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": empty file, not an ONNX model"));
  }
  LoadedModel loaded;
  onnx::ModelProto& model = loaded.model;
  if (!model.ParseFromString(*contents)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path,
                     ": not an ONNX model, or truncated (the protobuf "
                     "does not parse)"));
  }
  contents->clear();
  if (!model.has_graph() || model.ir_version() <= 0 ||
      model.opset_import_size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not an ONNX model (no graph, IR version or opset)"));
  }
  const onnx::GraphProto& graph = model.graph();
  if (graph.node_size() > kMaxNodes || graph.initializer_size() > kMaxNodes) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ", graph.node_size(), " nodes and ", graph.initializer_size(),
        " initializers, more than the limit of ", kMaxNodes, " each"));
  }
  if (graph.sparse_initializer_size() > 0) {
    return absl::UnimplementedError(
        absl::StrCat(path, ": sparse initializers (\"",
                     graph.sparse_initializer(0).values().name(),
                     "\", ...) are not supported"));
  }
  LATHE_RETURN_IF_ERROR(CheckDomains(model.graph(), path));
  LATHE_ASSIGN_OR_RETURN(const int64_t declared, DefaultOpset(model, path));
  LATHE_RETURN_IF_ERROR(CheckNodes(model.graph(), declared, path));
  loaded.opset = declared;
  if (declared < kMinOpset) {
    LATHE_RETURN_IF_ERROR(CheckOlderOpset(model.graph(), declared, path));
    loaded.opset = kMinOpset;
  }
  for (const onnx::TensorProto& initializer : model.graph().initializer()) {
    LATHE_RETURN_IF_ERROR(CheckTensor(
        initializer, absl::StrCat("initializer ", initializer.name()), path));
  }
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& error) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a valid ONNX model: ", error.what()));
  }
  return loaded;
}

}  // namespace lathe::onnx_frontend
