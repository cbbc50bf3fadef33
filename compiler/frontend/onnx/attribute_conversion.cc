#include "compiler/frontend/onnx/attribute_conversion.h"

#include "absl/strings/str_cat.h"
#include "onnx/defs/schema.h"

namespace lathe::onnx_frontend {

absl::StatusOr<graph::Attr> ConvertAttribute(const onnx::AttributeProto& proto,
                                             const std::string& node,
                                             const std::string& op) {
  switch (proto.type()) {
    case onnx::AttributeProto::FLOAT:
      return graph::Attr(static_cast<double>(proto.f()));
    case onnx::AttributeProto::INT:
      return graph::Attr(static_cast<int64_t>(proto.i()));
    case onnx::AttributeProto::STRING:
      return graph::Attr(proto.s());
    case onnx::AttributeProto::INTS:
      return graph::Attr(
          std::vector<int64_t>(proto.ints().begin(), proto.ints().end()));
    case onnx::AttributeProto::FLOATS:
      return graph::Attr(
          std::vector<double>(proto.floats().begin(), proto.floats().end()));
    default:
      return absl::UnimplementedError(absl::StrCat(
          "node ", node, " (", op, "): attribute ", proto.name(), " of kind ",
          onnx::AttributeProto::AttributeType_Name(proto.type()),
          " is not supported"));
  }
}

void FillSchemaDefaults(const std::string& op, int64_t opset,
                        std::map<std::string, graph::Attr>& attrs) {
  const onnx::OpSchema* schema =
      onnx::OpSchemaRegistry::Schema(op, static_cast<int>(opset));
  if (schema == nullptr) return;
  for (const auto& [name, attribute] : schema->attributes()) {
    if (attrs.count(name) != 0 || attribute.required) continue;
    if (attribute.default_value.type() == onnx::AttributeProto::UNDEFINED) {
      continue;
    }
    auto converted = ConvertAttribute(attribute.default_value, "", op);
    if (converted.ok()) attrs.emplace(name, *std::move(converted));
  }
}

}  // namespace lathe::onnx_frontend
