#include "compiler/frontend/onnx/node_conversion.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/attribute_conversion.h"
#include "compiler/frontend/onnx/tensor_proto_conversion.h"

namespace lathe::onnx_frontend {
namespace {

using graph::Attr;
using graph::kNoValue;

constexpr int64_t kTargetOpset = 17;

std::string Where(const onnx::NodeProto& proto, const std::string& name,
                  int64_t opset) {
  return absl::StrCat("node ", name, " (", proto.op_type(), ", opset ", opset,
                      ")");
}

const std::vector<int64_t>* FindInts(const graph::Node& node,
                                     const std::string& key) {
  auto found = node.attrs.find(key);
  if (found == node.attrs.end()) return nullptr;
  return std::get_if<std::vector<int64_t>>(&found->second);
}

const std::string* FindString(const graph::Node& node, const std::string& key) {
  auto found = node.attrs.find(key);
  if (found == node.attrs.end()) return nullptr;
  return std::get_if<std::string>(&found->second);
}

// A Constant node: its one output is a constant value.
absl::Status ConvertConstant(const onnx::NodeProto& proto,
                             const std::string& where, GraphBuilder& builder) {
  if (proto.output_size() != 1 || proto.attribute_size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": needs one output and one value attribute"));
  }
  const onnx::AttributeProto& attribute = proto.attribute(0);
  TensorData data;
  if (attribute.name() == "value") {
    LATHE_ASSIGN_OR_RETURN(
        data, TensorFromProto(attribute.t(), absl::StrCat(where, ": value")));
  } else if (attribute.name() == "value_float") {
    data = TensorData(DType::Float32(), {});
    data.values[0] = RoundToDType(attribute.f(), DType::Float32());
  } else if (attribute.name() == "value_floats") {
    data = TensorData(DType::Float32(), {attribute.floats_size()});
    for (int i = 0; i < attribute.floats_size(); ++i) {
      data.values[i] = RoundToDType(attribute.floats(i), DType::Float32());
    }
  } else if (attribute.name() == "value_int") {
    data = TensorData(DType::Int64(), {});
    data.values[0] = static_cast<double>(attribute.i());
  } else if (attribute.name() == "value_ints") {
    data = TensorData(DType::Int64(), {attribute.ints_size()});
    for (int i = 0; i < attribute.ints_size(); ++i) {
      data.values[i] = static_cast<double>(attribute.ints(i));
    }
  } else {
    return absl::UnimplementedError(
        absl::StrCat(where, ": a constant given as ", attribute.name(),
                     " is not supported"));
  }
  builder.Bind(proto.output(0),
               builder.NewConstant(proto.output(0), std::move(data)));
  return absl::OkStatus();
}

// Attributes, with ConstantOfShape's tensor `value` as a number and a type.
absl::Status ConvertAttributes(const onnx::NodeProto& proto,
                               const std::string& where, graph::Node& node) {
  for (const onnx::AttributeProto& attribute : proto.attribute()) {
    if (proto.op_type() == "ConstantOfShape" && attribute.name() == "value") {
      LATHE_ASSIGN_OR_RETURN(
          TensorData value,
          TensorFromProto(attribute.t(), absl::StrCat(where, ": value")));
      if (value.size() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": value must hold one element, not ", value.size()));
      }
      node.attrs["value"] = value.values[0];
      node.attrs["to"] = static_cast<int64_t>(attribute.t().data_type());
      continue;
    }
    LATHE_ASSIGN_OR_RETURN(
        Attr converted,
        ConvertAttribute(attribute, node.name, proto.op_type()));
    node.attrs[attribute.name()] = std::move(converted);
  }
  if (proto.op_type() == "ConstantOfShape" && !node.Has("value")) {
    node.attrs["value"] = 0.0;
    node.attrs["to"] = static_cast<int64_t>(onnx::TensorProto::FLOAT);
  }
  return absl::OkStatus();
}

// Moves an ints attribute that opset 13 made an input into input `index`.
void MoveAttributeToInput(graph::Node& node, const std::string& key,
                          size_t index, GraphBuilder& builder) {
  const std::vector<int64_t>* values = FindInts(node, key);
  if (values == nullptr) return;
  int constant =
      builder.NewInt64Constant(absl::StrCat(node.name, "_", key), *values);
  if (node.inputs.size() <= index) node.inputs.resize(index + 1, kNoValue);
  node.inputs[index] = constant;
  node.attrs.erase(key);
}

// Kernel size, strides, dilations and explicit pads of windowed operators.
void FillWindowAttributes(graph::Node& node, GraphBuilder& builder) {
  const bool is_conv = node.op == "Conv" || node.op == "ConvTranspose";
  if (FindInts(node, "kernel_shape") == nullptr && is_conv &&
      node.inputs.size() > 1) {
    auto weight = builder.StaticType(node.inputs[1]);
    if (weight && weight->shape.size() >= 2) {
      node.attrs["kernel_shape"] =
          std::vector<int64_t>(weight->shape.begin() + 2, weight->shape.end());
    }
  }
  const std::vector<int64_t>* kernel = FindInts(node, "kernel_shape");
  if (kernel == nullptr) return;
  const std::vector<int64_t> kernel_shape = *kernel;
  const size_t rank = kernel_shape.size();
  if (!node.Has("strides"))
    node.attrs["strides"] = std::vector<int64_t>(rank, 1);
  if (node.op != "AveragePool" && !node.Has("dilations")) {
    node.attrs["dilations"] = std::vector<int64_t>(rank, 1);
  }
  if (node.op == "ConvTranspose" && !node.Has("output_padding")) {
    node.attrs["output_padding"] = std::vector<int64_t>(rank, 0);
  }
  const std::string* auto_pad = FindString(node, "auto_pad");
  const std::string mode = auto_pad == nullptr ? "NOTSET" : *auto_pad;
  if (mode == "VALID") {
    node.attrs["pads"] = std::vector<int64_t>(2 * rank, 0);
    node.attrs["auto_pad"] = std::string("NOTSET");
  } else if ((mode == "SAME_UPPER" || mode == "SAME_LOWER") &&
             node.op != "ConvTranspose") {
    auto input = builder.StaticType(node.inputs[0]);
    if (!input || input->shape.size() != rank + 2) return;
    const std::vector<int64_t>& strides = *FindInts(node, "strides");
    const std::vector<int64_t>* dilations = FindInts(node, "dilations");
    if (strides.size() != rank || (dilations && dilations->size() != rank)) {
      return;  // malformed: the graph's type inference names it
    }
    // Values beyond this are malformed (the graph's type inference names
    // them); bounding them keeps the arithmetic below from overflowing.
    constexpr int64_t kLargest = int64_t{1} << 30;
    for (size_t i = 0; i < rank; ++i) {
      const int64_t dilation = dilations ? (*dilations)[i] : 1;
      if (kernel_shape[i] < 1 || kernel_shape[i] > kLargest || strides[i] < 1 ||
          strides[i] > kLargest || dilation < 1 || dilation > kLargest) {
        return;
      }
    }
    std::vector<int64_t> pads(2 * rank, 0);
    for (size_t i = 0; i < rank; ++i) {
      const int64_t in = input->shape[i + 2];
      const int64_t stride = strides[i];
      const int64_t dilation = dilations ? (*dilations)[i] : 1;
      const int64_t out = (in + stride - 1) / stride;
      const int64_t total = std::max<int64_t>(
          0, (out - 1) * stride + (kernel_shape[i] - 1) * dilation + 1 - in);
      const int64_t small = total / 2;
      const int64_t large = total - small;
      pads[i] = mode == "SAME_UPPER" ? small : large;
      pads[i + rank] = mode == "SAME_UPPER" ? large : small;
    }
    node.attrs["pads"] = pads;
    node.attrs["auto_pad"] = std::string("NOTSET");
  } else if (mode == "NOTSET" && !node.Has("pads")) {
    node.attrs["pads"] = std::vector<int64_t>(2 * rank, 0);
  }
}

// Softmax and LogSoftmax before opset 13 coerce the input to 2-D at `axis`.
void EmitCoercedSoftmax(graph::Node node, GraphBuilder& builder) {
  int64_t axis = node.Int("axis");
  auto input = builder.StaticType(node.inputs[0]);
  // An unknown rank matches no axis but -1.
  const int64_t rank =
      input ? static_cast<int64_t>(input->shape.size()) : int64_t{-2};
  if (axis == -1 || axis == rank - 1) {  // the 2-D view changes nothing
    node.attrs["axis"] = int64_t{-1};
    builder.Emit(std::move(node));
    return;
  }
  const int output = node.outputs[0];
  graph::Node flatten;
  flatten.op = "Flatten";
  flatten.name = builder.UniqueNodeName(node.name + "_flatten", "Flatten");
  flatten.attrs["axis"] = axis;
  flatten.inputs = {node.inputs[0]};
  flatten.outputs = {builder.NewValue(node.name + "_2d")};

  int shape = kNoValue;
  if (input) {
    shape = builder.NewInt64Constant(node.name + "_shape", input->shape);
  } else {
    graph::Node shape_node;
    shape_node.op = "Shape";
    shape_node.name = builder.UniqueNodeName(node.name + "_shape", "Shape");
    shape_node.inputs = {node.inputs[0]};
    shape = builder.NewValue(node.name + "_shape");
    shape_node.outputs = {shape};
    FillSchemaDefaults("Shape", kTargetOpset, shape_node.attrs);
    builder.Emit(std::move(shape_node));
  }
  node.attrs["axis"] = int64_t{-1};
  node.inputs = {flatten.outputs[0]};
  node.outputs = {builder.NewValue(node.name + "_2d_out")};

  graph::Node reshape;
  reshape.op = "Reshape";
  reshape.name = builder.UniqueNodeName(node.name + "_reshape", "Reshape");
  reshape.inputs = {node.outputs[0], shape};
  reshape.outputs = {output};
  FillSchemaDefaults("Reshape", kTargetOpset, reshape.attrs);

  builder.Emit(std::move(flatten));
  builder.Emit(std::move(node));
  builder.Emit(std::move(reshape));
}

}  // namespace

absl::Status ConvertNode(const onnx::NodeProto& proto, GraphBuilder& builder) {
  const int64_t opset = builder.opset();
  graph::Node node;
  node.op = proto.op_type();
  node.name = builder.UniqueNodeName(proto.name(), proto.op_type());
  const std::string where = Where(proto, node.name, opset);
  if (node.op == "Constant") return ConvertConstant(proto, where, builder);

  LATHE_RETURN_IF_ERROR(ConvertAttributes(proto, where, node));
  FillSchemaDefaults(node.op, opset, node.attrs);
  for (const std::string& input : proto.input()) {
    LATHE_ASSIGN_OR_RETURN(int id, builder.Lookup(input, node.name));
    node.inputs.push_back(id);
  }
  while (!node.inputs.empty() && node.inputs.back() == kNoValue) {
    node.inputs.pop_back();
  }
  if (node.inputs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": no inputs"));
  }
  int outputs = proto.output_size();
  while (outputs > 0 && proto.output(outputs - 1).empty()) --outputs;
  for (int i = 0; i < outputs; ++i) {
    const std::string& output = proto.output(i);
    if (output.empty()) {
      node.outputs.push_back(
          builder.NewValue(absl::StrCat(node.name, "_unused_", i)));
      continue;
    }
    auto id = builder.DefineOutput(output);
    if (!id.ok()) {
      return absl::Status(id.status().code(),
                          absl::StrCat(where, ": ", id.status().message()));
    }
    node.outputs.push_back(*id);
  }
  if (node.outputs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": no outputs"));
  }

  // The opset-17 form.
  if (opset < 13 && (node.op == "Squeeze" || node.op == "Unsqueeze" ||
                     node.op == "ReduceSum")) {
    MoveAttributeToInput(node, "axes", 1, builder);
  }
  if (opset < 13 && node.op == "Split") {
    MoveAttributeToInput(node, "split", 1, builder);
  }
  if (opset < 12 && node.op == "Dropout") node.attrs.erase("ratio");
  if (node.op == "Conv" || node.op == "ConvTranspose" || node.op == "MaxPool" ||
      node.op == "AveragePool") {
    FillWindowAttributes(node, builder);
  }
  if (node.op == "Transpose" && !node.Has("perm")) {
    auto input = builder.StaticType(node.inputs[0]);
    if (input) {
      std::vector<int64_t> perm(input->shape.size());
      for (size_t i = 0; i < perm.size(); ++i) {
        perm[i] = static_cast<int64_t>(perm.size() - 1 - i);
      }
      node.attrs["perm"] = perm;
    }
  }
  FillSchemaDefaults(node.op, kTargetOpset, node.attrs);
  if (opset < 13 && (node.op == "Softmax" || node.op == "LogSoftmax")) {
    EmitCoercedSoftmax(std::move(node), builder);
    return absl::OkStatus();
  }
  builder.Emit(std::move(node));
  return absl::OkStatus();
}

}  // namespace lathe::onnx_frontend
