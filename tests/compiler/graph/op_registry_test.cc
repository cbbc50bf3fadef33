#include "compiler/graph/op_registry.h"

#include <algorithm>

#include "gtest/gtest.h"
#include "tests/compiler/graph/graph_builder.h"

namespace lathe::graph {
namespace {

using testing::F32;
using testing::GraphBuilder;

// The operators issue 24 lists, all present.
TEST(OpRegistry, HasTheListedOperators) {
  for (const char* op : {"Conv",
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
                         "Shape"}) {
    EXPECT_TRUE(CheckSupported(op).ok()) << op;
    ASSERT_NE(FindOpDef(op), nullptr) << op;
    EXPECT_TRUE(FindOpDef(op)->infer && FindOpDef(op)->eval) << op;
  }
  std::vector<std::string> ops = SupportedOps();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
}

TEST(OpRegistry, RefusesUnknownOperatorsByName) {
  absl::Status status = CheckSupported("NonMaxSuppression");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(status.message().find("NonMaxSuppression"), std::string::npos);
  GraphBuilder b;
  int x = b.Input("x", F32({2}));
  b.Add("Loop", {x});
  absl::Status infer = InferNodeTypes(b.graph, b.graph.nodes()[0]).status();
  EXPECT_NE(infer.message().find("Loop_0"), std::string::npos) << infer;
  EXPECT_NE(infer.message().find("Loop"), std::string::npos) << infer;
}

TEST(OpRegistry, LathesOwnOperatorsAreNotOnnxs) {
  // The Winograd transforms exist for the graph passes, not for ONNX files.
  ASSERT_NE(FindOpDef("WinogradInputTransform"), nullptr);
  absl::Status status = CheckSupported("WinogradInputTransform");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(status.message().find("Lathe's own"), std::string::npos) << status;
  std::vector<std::string> ops = SupportedOps();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "WinogradOutputTransform"), 0);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Conv"), 1);
}

TEST(OpRegistry, InferenceNamesAnUntypedInput) {
  GraphBuilder b;
  int x = b.Input("x", F32({2}));
  b.graph.value(x).typed = false;
  b.Add("Relu", {x});
  absl::Status status = InferNodeTypes(b.graph, b.graph.nodes()[0]).status();
  EXPECT_NE(status.message().find("input x has no known type"),
            std::string::npos)
      << status;
}

TEST(OpRegistry, InferenceBoundsElementCounts) {
  GraphBuilder b;
  int x = b.Input("x", F32({1}));
  int shape = b.Const("shape", testing::Ints({int64_t{1} << 20, 1 << 20}));
  b.Add("Expand", {x, shape});
  absl::Status status = InferNodeTypes(b.graph, b.graph.nodes()[0]).status();
  EXPECT_NE(status.message().find("too many elements"), std::string::npos)
      << status;
}

TEST(OpRegistry, EvaluationChecksItsInputs) {
  GraphBuilder b;
  int x = b.Input("x", F32({2}));
  b.Add("Relu", {x});
  EXPECT_FALSE(EvaluateNode(b.graph.nodes()[0], {}).ok());
  EXPECT_FALSE(EvaluateNode(b.graph.nodes()[0], {nullptr}).ok());
}

}  // namespace
}  // namespace lathe::graph

namespace lathe::graph {
namespace {

// A malformed model may give an attribute of another kind: numbers convert,
// other kinds read as absent, and nothing aborts.
TEST(OpRegistry, AttributesOfAnotherKindDoNotAbort) {
  GraphBuilder b;
  int x = b.Input("x", testing::F32({1, 1, 4, 4}));
  int w = b.Input("w", testing::F32({1, 1, 3, 3}));
  b.Add("Conv", {x, w},
        {{"strides", std::string("two")}, {"group", 1.0}, {"pads", 0.5}});
  b.Add("LeakyRelu", {x}, {{"alpha", int64_t{1}}});
  absl::StatusOr<std::vector<TensorType>> conv =
      InferNodeTypes(b.graph, b.graph.nodes()[0]);
  ASSERT_TRUE(conv.ok()) << conv.status();
  EXPECT_EQ((*conv)[0].shape, (std::vector<int64_t>{1, 1, 2, 2}));
  TensorData data(DType::Float32(), {1, 1, 4, 4});
  data.values.assign(16, -2.0);
  absl::StatusOr<std::vector<TensorData>> leaky =
      EvaluateNode(b.graph.nodes()[1], {&data});
  ASSERT_TRUE(leaky.ok()) << leaky.status();
  EXPECT_EQ((*leaky)[0].values[0], -2.0);  // alpha 1
}

}  // namespace
}  // namespace lathe::graph
