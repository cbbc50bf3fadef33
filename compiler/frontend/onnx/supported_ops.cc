#include "compiler/frontend/onnx/supported_ops.h"

#include <set>

#include "absl/strings/str_cat.h"

namespace lathe::onnx_frontend {

absl::Status CheckOpSupported(const std::string& op) {
  static const std::set<std::string> kSupported = {
      "Conv",
      "ConvTranspose",
      "Gemm",
      "MatMul",
      "Add",
      "Sub",
      "Mul",
      "Div",
      "Pow",
      "Sqrt",
      "Exp",
      "Log",
      "Erf",
      "Tanh",
      "Sigmoid",
      "Relu",
      "LeakyRelu",
      "Clip",
      "HardSigmoid",
      "HardSwish",
      "Neg",
      "Abs",
      "Reciprocal",
      "Max",
      "Min",
      "Sum",
      "Mean",
      "Where",
      "Equal",
      "Less",
      "Greater",
      "Cast",
      "MaxPool",
      "AveragePool",
      "GlobalAveragePool",
      "GlobalMaxPool",
      "BatchNormalization",
      "Softmax",
      "LogSoftmax",
      "LayerNormalization",
      "ReduceMean",
      "ReduceSum",
      "ReduceMax",
      "Transpose",
      "Reshape",
      "Flatten",
      "Squeeze",
      "Unsqueeze",
      "Concat",
      "Split",
      "Slice",
      "Gather",
      "Pad",
      "Expand",
      "Identity",
      "Dropout",
      "Constant",
      "ConstantOfShape",
      "Shape",
  };
  if (kSupported.count(op) != 0) return absl::OkStatus();
  return absl::UnimplementedError(
      absl::StrCat("operator ", op, " is not supported"));
}

}  // namespace lathe::onnx_frontend
