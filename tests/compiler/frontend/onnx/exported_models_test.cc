// Imports the models PyTorch exports (tests/models/export_models.py:
// ResNet-18, MobileNetV2 and a 2-layer transformer encoder at opsets 13 and
// 17, random weights) and checks their graphs and reference tensors. Skipped
// with a message when Debian's python3-torch, python3-torchvision or
// python3-onnx is missing.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <ostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/frontend/onnx/onnx_importer.h"
#include "compiler/frontend/onnx/tensor_file.h"
#include "compiler/graph/pipeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lathe {
namespace {

using ::testing::ElementsAre;

bool HasPyTorch() {
  return std::system(
             "/usr/bin/python3 -c 'import torch, torchvision, onnx' "
             ">/dev/null 2>&1") == 0;
}

// Exports one model at one opset (ctest runs each case in its own process);
// returns its folder.
std::string Export(const std::string& name, int opset) {
  std::string out = ::testing::TempDir() + "lathe_exported_models";
  std::string command = absl::StrCat(
      "/usr/bin/python3 ", LATHE_SOURCE_DIR, "/tests/models/export_models.py ",
      out, " --models ", name, " --opsets ", opset, " 2>/dev/null");
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return absl::StrCat(out, "/", name, "_opset", opset);
}

struct ExportedModel {
  std::string name;
  int opset;
  std::map<std::string, int> op_counts;  // some of the ops it must have
};

void PrintTo(const ExportedModel& model, std::ostream* os) {
  *os << model.name << " opset " << model.opset;
}

// A weight: a constant, or an Identity of one (PyTorch shares equal
// initializers through Identity nodes).
bool IsWeight(const graph::Graph& g, int value) {
  if (g.IsConstant(value)) return true;
  int producer = g.value(value).producer;
  return producer != graph::kNoValue && g.nodes()[producer].op == "Identity" &&
         g.IsConstant(g.nodes()[producer].inputs[0]);
}

class ExportedModelTest : public ::testing::TestWithParam<ExportedModel> {};

TEST_P(ExportedModelTest, ImportsWithItsReferenceTensors) {
  if (!HasPyTorch()) {
    GTEST_SKIP() << "/usr/bin/python3 lacks torch, torchvision or onnx "
                    "(install python3-torch python3-torchvision python3-onnx)";
  }
  const ExportedModel& model = GetParam();
  const std::string dir = Export(model.name, model.opset);
  auto imported = ImportOnnxModel(dir + "/model.onnx");
  ASSERT_TRUE(imported.ok()) << imported.status();
  const graph::Graph& g = *imported;
  ASSERT_TRUE(g.Verify().ok()) << g.Verify();

  std::map<std::string, int> counts;
  for (const graph::Node& node : g.nodes()) ++counts[node.op];
  EXPECT_EQ(counts.count("Constant"), 0u);
  for (const auto& [op, count] : model.op_counts) {
    EXPECT_EQ(counts[op], count) << op;
  }
  int untyped = 0;
  for (const graph::Value& value : g.values()) untyped += value.typed ? 0 : 1;
  std::printf("%s opset %d: %zu nodes, %zu values, %d untyped\n",
              model.name.c_str(), model.opset, g.nodes().size(),
              g.values().size(), untyped);

  ASSERT_EQ(g.inputs().size(), 1u);
  ASSERT_EQ(g.outputs().size(), 1u);
  std::string name;
  auto input = ReadTensorFile(dir + "/test_data_set_0/input_0.pb", &name);
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_EQ(name, g.value(g.inputs()[0]).name);
  EXPECT_EQ(input->dtype, g.value(g.inputs()[0]).type.dtype);
  EXPECT_EQ(input->shape, g.value(g.inputs()[0]).type.shape);
  auto output = ReadTensorFile(dir + "/test_data_set_0/output_0.pb");
  ASSERT_TRUE(output.ok()) << output.status();
  const graph::Value& out = g.value(g.outputs()[0]);
  EXPECT_TRUE(out.typed);
  EXPECT_EQ(output->dtype, out.type.dtype);
  EXPECT_EQ(output->shape, out.type.shape);
  // The graph's passes type every value of the importer's opset-17 form.
  graph::Graph passed = g;
  absl::Status passes = graph::RunGraphPasses(passed);
  ASSERT_TRUE(passes.ok()) << passes;
  for (const graph::Value& value : passed.values()) {
    if (!value.dead) {
      EXPECT_TRUE(value.typed) << value.name;
    }
  }
  EXPECT_EQ(passed.value(passed.outputs()[0]).type.shape, output->shape);

  // Weights arrive as constants: every Conv and Gemm reads one.
  for (const graph::Node& node : g.nodes()) {
    if (node.op == "Conv" || node.op == "Gemm") {
      EXPECT_TRUE(IsWeight(g, node.inputs[1])) << node.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    PyTorch, ExportedModelTest,
    ::testing::Values(
        ExportedModel{"resnet18",
                      13,
                      {{"Conv", 20},
                       {"Relu", 17},
                       {"Add", 8},
                       {"MaxPool", 1},
                       {"GlobalAveragePool", 1},
                       {"Gemm", 1}}},
        ExportedModel{"resnet18", 17, {{"Conv", 20}, {"Gemm", 1}}},
        ExportedModel{"mobilenet_v2", 13, {{"Conv", 52}, {"Clip", 35}}},
        ExportedModel{"mobilenet_v2", 17, {{"Conv", 52}, {"Clip", 35}}},
        ExportedModel{"encoder",
                      13,
                      {{"MatMul", 10},
                       {"Softmax", 2},
                       {"ReduceMean", 8},
                       {"Erf", 2},
                       {"Gemm", 2}}},
        ExportedModel{"encoder",
                      17,
                      {{"MatMul", 10},
                       {"Softmax", 2},
                       {"LayerNormalization", 4},
                       {"Erf", 2}}}),
    [](const ::testing::TestParamInfo<ExportedModel>& info) {
      return absl::StrCat(info.param.name, "_opset", info.param.opset);
    });

}  // namespace
}  // namespace lathe
