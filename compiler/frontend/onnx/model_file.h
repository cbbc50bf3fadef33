// Loading an ONNX model file into a checked ModelProto (private to the
// importer), the first half of ImportOnnxModel:
//   1. read the file, bounded by max_file_bytes (regular files only),
//   2. parse it; an empty, truncated or non-ONNX file is one error naming
//      the file; at most kMaxNodes nodes and initializers, none sparse,
//   3. check the opsets: no node of another domain; the default domain at
//      11..17, or below 11 when every operator of the model is the same at
//      its opset and at 11 (then read as opset 11),
//   4. check that every node's operator is supported (graph/op_registry.h;
//      naming the node, its op type and its opset), and the type, size and
//      location (no external data) of every tensor in the model,
//   5. run onnx::checker::check_model.
// Returns the model and the default-domain opset its nodes are read at.
// Tests: tests/compiler/frontend/onnx/onnx_importer_test.cc.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace lathe::onnx_frontend {

inline constexpr int64_t kMinOpset = 11;
inline constexpr int64_t kMaxOpset = 17;
// The most nodes (and, separately, initializers) a model may have.
inline constexpr int kMaxNodes = 1 << 20;

struct LoadedModel {
  onnx::ModelProto model;
  int64_t opset = 0;
};

absl::StatusOr<LoadedModel> LoadOnnxModel(const std::string& path,
                                          int64_t max_file_bytes);

}  // namespace lathe::onnx_frontend
