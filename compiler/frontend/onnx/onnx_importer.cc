#include "compiler/frontend/onnx/onnx_importer.h"

#include "absl/strings/str_cat.h"
#include "compiler/frontend/onnx/graph_builder.h"
#include "compiler/frontend/onnx/model_file.h"
#include "compiler/frontend/onnx/shape_binding.h"

namespace lathe {

absl::StatusOr<graph::Graph> ImportOnnxModel(const std::string& path,
                                             const OnnxImportOptions& options) {
  // Each step's errors name the file once, here or in the step.
  auto with_path = [&](const absl::Status& status) {
    return absl::Status(status.code(),
                        absl::StrCat(path, ": ", status.message()));
  };
  auto loaded = onnx_frontend::LoadOnnxModel(path, options.max_file_bytes);
  if (!loaded.ok()) return loaded.status();
  onnx::ModelProto& model = loaded->model;
  absl::Status constants =
      onnx_frontend::BindConstantInputs(model, options.constant_inputs);
  if (!constants.ok()) return with_path(constants);
  absl::Status bound =
      onnx_frontend::BindInputShapes(model, options.input_shapes);
  if (!bound.ok()) return with_path(bound);
  absl::Status inferred = onnx_frontend::InferModelShapes(model, path);
  if (!inferred.ok()) return inferred;
  onnx_frontend::GraphBuilder builder(model, loaded->opset);
  auto graph = builder.Build();
  if (!graph.ok()) return with_path(graph.status());
  return graph;
}

}  // namespace lathe
