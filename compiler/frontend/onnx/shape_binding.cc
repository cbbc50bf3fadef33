#include "compiler/frontend/onnx/shape_binding.h"

#include <exception>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/frontend/onnx/tensor_proto_conversion.h"
#include "onnx/shape_inference/implementation.h"

namespace lathe::onnx_frontend {
namespace {

std::string DimText(const onnx::TensorShapeProto::Dimension& dim) {
  if (dim.has_dim_value()) return absl::StrCat(dim.dim_value());
  if (dim.has_dim_param() && !dim.dim_param().empty()) return dim.dim_param();
  return "?";
}

}  // namespace

absl::Status BindInputShapes(
    onnx::ModelProto& model,
    const std::map<std::string, std::vector<int64_t>>& input_shapes) {
  onnx::GraphProto& graph = *model.mutable_graph();
  std::set<std::string> initializers;
  for (const auto& initializer : graph.initializer()) {
    initializers.insert(initializer.name());
  }
  std::set<std::string> inputs;
  for (onnx::ValueInfoProto& input : *graph.mutable_input()) {
    if (initializers.count(input.name()) != 0) continue;
    inputs.insert(input.name());
    const std::string what = absl::StrCat("input \"", input.name(), "\"");
    if (!input.type().has_tensor_type()) {
      return absl::UnimplementedError(
          absl::StrCat(what,
                       ": not a tensor (sequences, maps and optionals "
                       "are not supported)"));
    }
    onnx::TypeProto::Tensor& tensor =
        *input.mutable_type()->mutable_tensor_type();
    auto given = input_shapes.find(input.name());
    if (given != input_shapes.end()) {
      const std::vector<int64_t>& dims = given->second;
      if (tensor.has_shape() &&
          tensor.shape().dim_size() != static_cast<int>(dims.size())) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": --shape gives ", dims.size(), " dimensions [",
                         absl::StrJoin(dims, ","), "] but the input has rank ",
                         tensor.shape().dim_size()));
      }
      for (size_t i = 0; i < dims.size(); ++i) {
        if (!tensor.has_shape()) break;
        const auto& dim = tensor.shape().dim(static_cast<int>(i));
        if (dim.has_dim_value() && dim.dim_value() != dims[i]) {
          return absl::InvalidArgumentError(absl::StrCat(
              what, ": --shape gives dimension ", i, " as ", dims[i],
              " but the model fixes it at ", dim.dim_value()));
        }
      }
      auto count = BoundedElementCount(dims, what);
      if (!count.ok()) return count.status();
      onnx::TensorShapeProto* shape = tensor.mutable_shape();
      shape->clear_dim();
      for (int64_t dim : dims) shape->add_dim()->set_dim_value(dim);
      continue;
    }
    if (!tensor.has_shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": the model gives no shape; give one with --shape ",
          input.name(), "=D0,D1,..."));
    }
    std::vector<int64_t> dims;
    for (int i = 0; i < tensor.shape().dim_size(); ++i) {
      const auto& dim = tensor.shape().dim(i);
      if (!dim.has_dim_value() || dim.dim_value() < 0) {
        std::vector<std::string> texts;
        for (const auto& d : tensor.shape().dim()) texts.push_back(DimText(d));
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": dimension ", i, " (\"", DimText(dim),
                         "\" of [", absl::StrJoin(texts, ","),
                         "]) is symbolic; give the shape with --shape ",
                         input.name(), "=D0,D1,..."));
      }
      dims.push_back(dim.dim_value());
    }
    auto count = BoundedElementCount(dims, what);
    if (!count.ok()) return count.status();
  }
  for (const auto& [name, dims] : input_shapes) {
    if (inputs.count(name) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--shape ", name, "=", absl::StrJoin(dims, ","),
                       ": the model has no input named \"", name,
                       "\" (inputs: ", absl::StrJoin(inputs, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status BindConstantInputs(
    onnx::ModelProto& model,
    const std::map<std::string, TensorData>& constant_inputs) {
  onnx::GraphProto& graph = *model.mutable_graph();
  std::set<std::string> initializers;
  for (const auto& initializer : graph.initializer()) {
    initializers.insert(initializer.name());
  }
  for (const auto& [name, data] : constant_inputs) {
    const std::string what = absl::StrCat("constant input \"", name, "\"");
    onnx::ValueInfoProto* input = nullptr;
    for (onnx::ValueInfoProto& candidate : *graph.mutable_input()) {
      if (candidate.name() == name) input = &candidate;
    }
    if (input == nullptr || initializers.count(name) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": the model has no graph input of that name"));
    }
    const onnx::TypeProto::Tensor& declared = input->type().tensor_type();
    auto proto = TensorToProto(data, name);
    if (!proto.ok()) return proto.status();
    if (declared.elem_type() != proto->data_type()) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": the data is ", OnnxTypeName(proto->data_type()),
          " but the input is ", OnnxTypeName(declared.elem_type())));
    }
    if (declared.has_shape()) {
      const auto& dims = declared.shape().dim();
      bool fits = dims.size() == static_cast<int>(data.shape.size());
      for (int i = 0; fits && i < dims.size(); ++i) {
        if (dims[i].has_dim_value() && dims[i].dim_value() != data.shape[i]) {
          fits = false;
        }
      }
      if (!fits) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": the data's shape [", absl::StrJoin(data.shape, ","),
            "] does not fit the input's declaration"));
      }
    }
    onnx::TensorShapeProto* shape =
        input->mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t dim : data.shape) shape->add_dim()->set_dim_value(dim);
    *graph.add_initializer() = *std::move(proto);
  }
  return absl::OkStatus();
}

absl::Status InferModelShapes(onnx::ModelProto& model,
                              const std::string& path) {
  // Data propagation computes the values of small shape tensors, which
  // gives Reshape and Expand after Shape arithmetic a static output shape.
  onnx::ModelProto copy = model;
  try {
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false,
                                        /*strict_mode_val=*/0,
                                        /*data_prop_val=*/true);
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), options);
    return absl::OkStatus();
  } catch (const std::exception&) {
    // Data propagation has failed on models plain inference accepts; retry
    // without it before reporting the model.
  }
  model = std::move(copy);
  try {
    onnx::shape_inference::InferShapes(model);
  } catch (const std::exception& error) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": shape inference failed: ", error.what()));
  }
  return absl::OkStatus();
}

}  // namespace lathe::onnx_frontend
