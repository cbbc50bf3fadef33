// The opset-17 form of imported nodes (node_conversion.h), through
// ImportOnnxModel on small models built here.
#include "compiler/frontend/onnx/node_conversion.h"

#include <string>

#include "compiler/frontend/onnx/onnx_importer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/frontend/onnx/test_model.h"

namespace lathe {
namespace {

using onnx_test::SetFloat;
using onnx_test::SetInt;
using onnx_test::SetInts;
using onnx_test::SetString;
using onnx_test::TestModel;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

graph::Graph Import(const TestModel& m, const std::string& file) {
  auto imported = ImportOnnxModel(m.Write(file));
  EXPECT_TRUE(imported.ok()) << imported.status();
  if (!imported.ok()) return graph::Graph();
  EXPECT_TRUE(imported->Verify().ok()) << imported->Verify();
  return *std::move(imported);
}

std::vector<std::string> Ops(const graph::Graph& g) {
  std::vector<std::string> ops;
  for (const auto& node : g.nodes()) ops.push_back(node.op);
  return ops;
}

std::vector<double> ConstantValues(const graph::Graph& g, int id) {
  EXPECT_TRUE(g.IsConstant(id));
  if (!g.IsConstant(id)) return {};
  return g.value(id).constant->values;
}

TEST(NodeConversion, AxesAttributesBefore13BecomeConstantInputs) {
  for (int64_t opset : {11, 13}) {
    TestModel m(opset);
    m.Input("x", {2, 1, 3});
    auto& squeeze = m.Node("Squeeze", {"x"}, {"s"}, "squeeze");
    auto& unsqueeze = m.Node("Unsqueeze", {"s"}, {"u"}, "unsqueeze");
    auto& reduce = m.Node("ReduceSum", {"u"}, {"y"}, "reduce");
    if (opset < 13) {
      SetInts(squeeze, "axes", {1});
      SetInts(unsqueeze, "axes", {0});
      SetInts(reduce, "axes", {2});
    } else {
      m.Int64s("axes1", {1});
      m.Int64s("axes0", {0});
      m.Int64s("axes2", {2});
      squeeze.add_input("axes1");
      unsqueeze.add_input("axes0");
      reduce.add_input("axes2");
    }
    m.Output("y", {1, 2, 1});
    graph::Graph g = Import(m, "axes.onnx");
    ASSERT_EQ(g.nodes().size(), 3u) << "opset " << opset;
    for (const graph::Node& node : g.nodes()) {
      EXPECT_FALSE(node.Has("axes")) << node.name;
      ASSERT_EQ(node.inputs.size(), 2u) << node.name;
    }
    EXPECT_THAT(ConstantValues(g, g.nodes()[0].inputs[1]), ElementsAre(1));
    EXPECT_THAT(ConstantValues(g, g.nodes()[1].inputs[1]), ElementsAre(0));
    EXPECT_THAT(ConstantValues(g, g.nodes()[2].inputs[1]), ElementsAre(2));
    EXPECT_EQ(g.value(g.nodes()[2].inputs[1]).type.dtype, DType::Int64());
    EXPECT_EQ(g.nodes()[2].Int("keepdims"), 1);
    EXPECT_EQ(g.nodes()[2].Int("noop_with_empty_axes"), 0);
    EXPECT_EQ(graph::TensorTypeText(g.value(g.outputs()[0]).type),
              "f32[1,2,1]");
  }
}

TEST(NodeConversion, SqueezeWithoutAxesKeepsOneInput) {
  TestModel m(11);
  m.Input("x", {2, 1, 3});
  m.Node("Squeeze", {"x"}, {"y"});
  m.Output("y", {2, 3});
  graph::Graph g = Import(m, "squeeze_all.onnx");
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0].inputs.size(), 1u);
}

TEST(NodeConversion, SplitAttributeBefore13BecomesAnInput) {
  TestModel m(12);
  m.Input("x", {6, 2});
  auto& split = m.Node("Split", {"x"}, {"a", "b"}, "split");
  SetInts(split, "split", {2, 4});
  m.Output("a", {2, 2});
  m.Output("b", {4, 2});
  graph::Graph g = Import(m, "split.onnx");
  ASSERT_EQ(g.nodes().size(), 1u);
  const graph::Node& node = g.nodes()[0];
  EXPECT_FALSE(node.Has("split"));
  EXPECT_EQ(node.Int("axis"), 0);
  ASSERT_EQ(node.inputs.size(), 2u);
  EXPECT_THAT(ConstantValues(g, node.inputs[1]), ElementsAre(2, 4));
  ASSERT_EQ(node.outputs.size(), 2u);
  EXPECT_EQ(graph::TensorTypeText(g.value(node.outputs[1]).type), "f32[4,2]");
}

TEST(NodeConversion, SoftmaxBefore13OnTheLastAxisKeepsItsNode) {
  TestModel m(11);
  m.Input("x", {2, 5});
  m.Node("Softmax", {"x"}, {"y"}, "softmax");  // axis 1 by default at 11
  m.Output("y", {2, 5});
  graph::Graph g = Import(m, "softmax_last.onnx");
  EXPECT_THAT(Ops(g), ElementsAre("Softmax"));
  EXPECT_EQ(g.nodes()[0].Int("axis"), -1);
}

TEST(NodeConversion, SoftmaxBefore13CoercesTo2D) {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    TestModel m(12);
    m.Input("x", {2, 3, 4});
    auto& node = m.Node(op, {"x"}, {"y"}, "sm");
    SetInt(node, "axis", 1);
    m.Output("y", {2, 3, 4});
    graph::Graph g = Import(m, "softmax_2d.onnx");
    ASSERT_THAT(Ops(g), ElementsAre("Flatten", op, "Reshape")) << op;
    EXPECT_EQ(g.nodes()[0].Int("axis"), 1);
    EXPECT_EQ(g.nodes()[1].Int("axis"), -1);
    EXPECT_EQ(g.nodes()[1].name, "sm");
    EXPECT_EQ(g.nodes()[1].inputs[0], g.nodes()[0].outputs[0]);
    EXPECT_EQ(g.nodes()[2].inputs[0], g.nodes()[1].outputs[0]);
    EXPECT_THAT(ConstantValues(g, g.nodes()[2].inputs[1]),
                ElementsAre(2, 3, 4));
    EXPECT_EQ(g.nodes()[2].Int("allowzero"), 0);
    // The graph output is the Reshape's, under the ONNX name, typed.
    EXPECT_EQ(g.outputs()[0], g.nodes()[2].outputs[0]);
    EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
    EXPECT_TRUE(g.value(g.outputs()[0]).typed);
  }
}

TEST(NodeConversion, SoftmaxFrom13KeepsItsAxis) {
  TestModel m(13);
  m.Input("x", {2, 3, 4});
  auto& node = m.Node("Softmax", {"x"}, {"y"});
  SetInt(node, "axis", 1);
  m.Output("y", {2, 3, 4});
  graph::Graph g = Import(m, "softmax13.onnx");
  ASSERT_THAT(Ops(g), ElementsAre("Softmax"));
  EXPECT_EQ(g.nodes()[0].Int("axis"), 1);
}

TEST(NodeConversion, DropoutRatioAttributeBefore12IsDropped) {
  TestModel m(11);
  m.Input("x", {4});
  auto& node = m.Node("Dropout", {"x"}, {"y", ""});
  SetFloat(node, "ratio", 0.25f);
  m.Output("y", {4});
  graph::Graph g = Import(m, "dropout.onnx");
  ASSERT_THAT(Ops(g), ElementsAre("Dropout"));
  EXPECT_FALSE(g.nodes()[0].Has("ratio"));
  EXPECT_EQ(g.nodes()[0].inputs.size(), 1u);
  EXPECT_EQ(g.nodes()[0].outputs.size(), 1u);  // the unnamed mask is dropped
}

TEST(NodeConversion, SamePaddingBecomesExplicitPads) {
  TestModel m(13);
  m.Input("x", {1, 1, 4, 5});
  m.Weight("w", {2, 1, 2, 3}, std::vector<float>(12, 1.0f));
  auto& conv = m.Node("Conv", {"x", "w"}, {"c"}, "conv");
  SetString(conv, "auto_pad", "SAME_UPPER");
  auto& pool = m.Node("MaxPool", {"c"}, {"p"}, "pool");
  SetString(pool, "auto_pad", "SAME_LOWER");
  SetInts(pool, "kernel_shape", {3, 3});
  SetInts(pool, "strides", {2, 2});
  auto& avg = m.Node("AveragePool", {"p"}, {"y"}, "avg");
  SetString(avg, "auto_pad", "VALID");
  SetInts(avg, "kernel_shape", {2, 2});
  m.Output("y", {1, 2, 1, 2});
  graph::Graph g = Import(m, "same_pads.onnx");
  ASSERT_THAT(Ops(g), ElementsAre("Conv", "MaxPool", "AveragePool"));
  const graph::Node& c = g.nodes()[0];
  // kernel 2x3, stride 1: total pad 1 (H) and 2 (W); SAME_UPPER puts the
  // odd one at the end.
  EXPECT_THAT(c.Ints("kernel_shape"), ElementsAre(2, 3));
  EXPECT_THAT(c.Ints("pads"), ElementsAre(0, 1, 1, 1));
  EXPECT_EQ(c.String("auto_pad"), "NOTSET");
  EXPECT_EQ(c.Int("group"), 1);
  const graph::Node& p = g.nodes()[1];
  // 4x5 input, kernel 3, stride 2: out 2x3, total pad 1 (H) and 2 (W);
  // SAME_LOWER puts the odd one at the beginning.
  EXPECT_THAT(p.Ints("pads"), ElementsAre(1, 1, 0, 1));
  EXPECT_THAT(p.Ints("dilations"), ElementsAre(1, 1));
  EXPECT_EQ(p.Int("ceil_mode"), 0);
  EXPECT_EQ(p.Int("storage_order"), 0);
  const graph::Node& a = g.nodes()[2];
  EXPECT_THAT(a.Ints("pads"), ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(a.Ints("strides"), ElementsAre(1, 1));
  EXPECT_FALSE(a.Has("dilations"));
  EXPECT_EQ(a.Int("count_include_pad"), 0);
  EXPECT_EQ(graph::TensorTypeText(g.value(g.outputs()[0]).type),
            "f32[1,2,1,2]");
}

TEST(NodeConversion, ConvTransposeGetsOutputPadding) {
  TestModel m(13);
  m.Input("x", {1, 2, 3, 3});
  m.Weight("w", {2, 4, 3, 3}, std::vector<float>(72, 0.5f));
  auto& node = m.Node("ConvTranspose", {"x", "w"}, {"y"});
  SetInts(node, "strides", {2, 2});
  m.Output("y", {1, 4, 7, 7});
  graph::Graph g = Import(m, "conv_transpose.onnx");
  const graph::Node& ct = g.nodes()[0];
  EXPECT_THAT(ct.Ints("kernel_shape"), ElementsAre(3, 3));
  EXPECT_THAT(ct.Ints("output_padding"), ElementsAre(0, 0));
  EXPECT_THAT(ct.Ints("pads"), ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(ct.Ints("strides"), ElementsAre(2, 2));
}

TEST(NodeConversion, DefaultsOfTheSchemaAreFilledIn) {
  TestModel m(17);
  m.Input("x", {2, 4});
  m.Weight("w", {3, 4}, std::vector<float>(12, 1.0f));
  m.Weight("scale", {3}, {1, 1, 1});
  m.Node("LeakyRelu", {"x"}, {"a"});
  auto& gemm = m.Node("Gemm", {"a", "w"}, {"b"});
  SetInt(gemm, "transB", 1);
  m.Node("HardSigmoid", {"b"}, {"c"});
  m.Node("LayerNormalization", {"c", "scale"}, {"d"});
  m.Node("Softmax", {"d"}, {"e"});
  m.Node("Transpose", {"e"}, {"f"});
  m.Node("Flatten", {"f"}, {"g"});
  m.Node("Gather", {"g", "x_index"}, {"y"});
  m.Int64s("x_index", {0});
  m.Output("y", {1, 2});
  graph::Graph g = Import(m, "defaults.onnx");
  ASSERT_EQ(g.nodes().size(), 8u);
  EXPECT_DOUBLE_EQ(g.nodes()[0].Float("alpha"), static_cast<float>(0.01));
  EXPECT_DOUBLE_EQ(g.nodes()[1].Float("alpha"), 1.0);
  EXPECT_DOUBLE_EQ(g.nodes()[1].Float("beta"), 1.0);
  EXPECT_EQ(g.nodes()[1].Int("transA"), 0);
  EXPECT_EQ(g.nodes()[1].Int("transB"), 1);
  EXPECT_DOUBLE_EQ(g.nodes()[2].Float("alpha"), static_cast<float>(0.2));
  EXPECT_DOUBLE_EQ(g.nodes()[2].Float("beta"), 0.5);
  EXPECT_EQ(g.nodes()[3].Int("axis"), -1);
  EXPECT_DOUBLE_EQ(g.nodes()[3].Float("epsilon"), static_cast<float>(1e-5));
  EXPECT_EQ(g.nodes()[4].Int("axis"), -1);
  EXPECT_THAT(g.nodes()[5].Ints("perm"), ElementsAre(1, 0));
  EXPECT_EQ(g.nodes()[6].Int("axis"), 1);
  EXPECT_EQ(g.nodes()[7].Int("axis"), 0);
}

TEST(NodeConversion, ConstantNodesBecomeConstantValues) {
  TestModel m(13);
  m.Input("x", {3});
  auto& tensor_node = m.Node("Constant", {}, {"k_tensor"});
  onnx::TensorProto* t = onnx_test::SetTensor(tensor_node, "value");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(3);
  for (float v : {1.5f, -2.0f, 3.25f}) t->add_float_data(v);
  auto& float_node = m.Node("Constant", {}, {"k_float"});
  SetFloat(float_node, "value_float", 0.5f);
  auto& ints_node = m.Node("Constant", {}, {"k_ints"});
  SetInts(ints_node, "value_ints", {3});
  m.Node("Add", {"x", "k_tensor"}, {"a"});
  m.Node("Mul", {"a", "k_float"}, {"b"});
  m.Node("Reshape", {"b", "k_ints"}, {"y"});
  m.Output("y", {3});
  graph::Graph g = Import(m, "constants.onnx");
  ASSERT_THAT(Ops(g), ElementsAre("Add", "Mul", "Reshape"));
  EXPECT_THAT(ConstantValues(g, g.nodes()[0].inputs[1]),
              ElementsAre(1.5, -2.0, 3.25));
  const graph::Value& half = g.value(g.nodes()[1].inputs[1]);
  EXPECT_TRUE(half.type.shape.empty());
  EXPECT_THAT(ConstantValues(g, g.nodes()[1].inputs[1]), ElementsAre(0.5));
  const graph::Value& shape = g.value(g.nodes()[2].inputs[1]);
  EXPECT_EQ(shape.type.dtype, DType::Int64());
  EXPECT_THAT(ConstantValues(g, g.nodes()[2].inputs[1]), ElementsAre(3));
}

TEST(NodeConversion, ConstantOfShapeValueBecomesNumberAndType) {
  TestModel m(13);
  m.Int64s("shape", {2, 3});
  m.Input("x", {2, 3}, onnx::TensorProto::INT64);
  auto& node = m.Node("ConstantOfShape", {"shape"}, {"c"});
  onnx::TensorProto* value = onnx_test::SetTensor(node, "value");
  value->set_data_type(onnx::TensorProto::INT64);
  value->add_dims(1);
  value->add_int64_data(7);
  m.Node("ConstantOfShape", {"shape"}, {"z"});
  m.Node("Add", {"x", "c"}, {"y"});
  m.Output("y", {2, 3}, onnx::TensorProto::INT64);
  m.Output("z", {2, 3});
  graph::Graph g = Import(m, "constant_of_shape.onnx");
  ASSERT_EQ(g.nodes().size(), 3u);
  EXPECT_DOUBLE_EQ(g.nodes()[0].Float("value"), 7.0);
  EXPECT_EQ(g.nodes()[0].Int("to"), onnx::TensorProto::INT64);
  EXPECT_DOUBLE_EQ(g.nodes()[1].Float("value"), 0.0);
  EXPECT_EQ(g.nodes()[1].Int("to"), onnx::TensorProto::FLOAT);
}

TEST(NodeConversion, CastKeepsTheOnnxTypeCode) {
  TestModel m(13);
  m.Input("x", {3});
  auto& node = m.Node("Cast", {"x"}, {"y"});
  SetInt(node, "to", onnx::TensorProto::INT64);
  m.Output("y", {3}, onnx::TensorProto::INT64);
  graph::Graph g = Import(m, "cast.onnx");
  EXPECT_EQ(g.nodes()[0].Int("to"), onnx::TensorProto::INT64);
  EXPECT_EQ(graph::TensorTypeText(g.value(g.outputs()[0]).type), "i64[3]");
}

TEST(NodeConversion, AbsentOptionalInputsAreNoValue) {
  TestModel m(13);
  m.Input("x", {3});
  m.Weight("hi", {}, {6.0f});
  m.Node("Clip", {"x", "", "hi"}, {"a"});
  m.Node("Clip", {"a", "", ""}, {"y"});
  m.Output("y", {3});
  graph::Graph g = Import(m, "clip.onnx");
  ASSERT_EQ(g.nodes().size(), 2u);
  ASSERT_EQ(g.nodes()[0].inputs.size(), 3u);
  EXPECT_EQ(g.nodes()[0].inputs[1], graph::kNoValue);
  EXPECT_TRUE(g.IsConstant(g.nodes()[0].inputs[2]));
  EXPECT_EQ(g.nodes()[1].inputs.size(), 1u);  // trailing absent ones dropped
}

TEST(NodeConversion, UnsupportedAttributeKindIsNamed) {
  TestModel m(13);
  m.Input("x", {3});
  auto& node = m.Node("Relu", {"x"}, {"y"}, "odd_relu");
  auto* a = node.add_attribute();
  a->set_name("names");
  a->set_type(onnx::AttributeProto::STRINGS);
  a->add_strings("a");
  m.Output("y", {3});
  auto imported = ImportOnnxModel(m.Write("strings_attr.onnx"));
  // The checker refuses the unknown attribute first, naming it.
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(), HasSubstr("names"));
}

}  // namespace
}  // namespace lathe
