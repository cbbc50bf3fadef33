#include "compiler/frontend/onnx/model_file.h"

#include <exception>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/bounded_file.h"
#include "compiler/frontend/onnx/supported_ops.h"
#include "compiler/frontend/onnx/tensor_proto_conversion.h"
#include "onnx/checker.h"

namespace lathe::onnx_frontend {
namespace {

bool IsDefaultDomain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

absl::StatusOr<int64_t> DefaultOpset(const onnx::ModelProto& model,
                                     const std::string& path) {
  int64_t opset = 0;
  for (const auto& import : model.opset_import()) {
    if (IsDefaultDomain(import.domain())) opset = import.version();
  }
  if (opset == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": the model imports no opset of the default ONNX domain"));
  }
  if (opset < kMinOpset || opset > kMaxOpset) {
    return absl::UnimplementedError(absl::StrCat(
        path, ": opset ", opset, " of the default domain is not supported (",
        kMinOpset, " to ", kMaxOpset, ")"));
  }
  return opset;
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
    const std::string name =
        node.name().empty() ? absl::StrCat("#", index) : node.name();
    if (!IsDefaultDomain(node.domain())) {
      return absl::UnimplementedError(absl::StrCat(
          path, ": node ", name, " (", node.op_type(), ") is in domain \"",
          node.domain(), "\"; only the default ONNX domain is supported"));
    }
    absl::Status supported = CheckOpSupported(node.op_type());
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
  auto opset = DefaultOpset(model, path);
  if (!opset.ok()) return opset.status();
  loaded.opset = *opset;
  absl::Status nodes = CheckNodes(model.graph(), loaded.opset, path);
  if (!nodes.ok()) return nodes;
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
