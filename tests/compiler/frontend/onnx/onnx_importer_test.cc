#include "compiler/frontend/onnx/onnx_importer.h"

#include <sys/stat.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/frontend/onnx/test_model.h"

namespace lathe {
namespace {

using onnx_test::SetInts;
using onnx_test::TestModel;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const graph::Node* FindNode(const graph::Graph& g, const std::string& op) {
  for (const graph::Node& node : g.nodes()) {
    if (node.op == op) return &node;
  }
  return nullptr;
}

// x[1,3,8,8] -> Conv(w[4,3,3,3], b[4], pads 1) -> Relu -> Add(r, r) -> y
TestModel ConvReluAdd(int64_t opset) {
  TestModel m(opset);
  m.Input("x", {1, 3, 8, 8});
  std::vector<float> w(4 * 3 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(i);
  m.Weight("w", {4, 3, 3, 3}, w);
  m.Weight("b", {4}, {1, 2, 3, 4});
  auto& conv = m.Node("Conv", {"x", "w", "b"}, {"c"}, "conv1");
  SetInts(conv, "pads", {1, 1, 1, 1});
  m.Node("Relu", {"c"}, {"r"}, "relu1");
  m.Node("Add", {"r", "r"}, {"y"}, "add1");
  m.Output("y", {1, 4, 8, 8});
  return m;
}

TEST(OnnxImporter, ImportsConvReluAddWithTypesConstantsAndDefaults) {
  std::string path = ConvReluAdd(13).Write("conv_relu_add.onnx");
  auto imported = ImportOnnxModel(path);
  ASSERT_TRUE(imported.ok()) << imported.status();
  const graph::Graph& g = *imported;
  ASSERT_TRUE(g.Verify().ok()) << g.Verify();

  ASSERT_EQ(g.inputs().size(), 1u);
  const graph::Value& x = g.value(g.inputs()[0]);
  EXPECT_EQ(x.name, "x");
  EXPECT_TRUE(x.typed);
  EXPECT_EQ(graph::TensorTypeText(x.type), "f32[1,3,8,8]");

  ASSERT_EQ(g.nodes().size(), 3u);
  EXPECT_EQ(g.nodes()[0].op, "Conv");
  EXPECT_EQ(g.nodes()[1].op, "Relu");
  EXPECT_EQ(g.nodes()[2].op, "Add");
  const graph::Node& conv = g.nodes()[0];
  EXPECT_EQ(conv.name, "conv1");
  EXPECT_THAT(conv.Ints("kernel_shape"), ElementsAre(3, 3));
  EXPECT_THAT(conv.Ints("strides"), ElementsAre(1, 1));
  EXPECT_THAT(conv.Ints("dilations"), ElementsAre(1, 1));
  EXPECT_THAT(conv.Ints("pads"), ElementsAre(1, 1, 1, 1));
  EXPECT_EQ(conv.Int("group"), 1);
  EXPECT_EQ(conv.String("auto_pad"), "NOTSET");

  ASSERT_EQ(conv.inputs.size(), 3u);
  EXPECT_EQ(conv.inputs[0], g.inputs()[0]);
  ASSERT_TRUE(g.IsConstant(conv.inputs[1]));
  const TensorData& w = *g.value(conv.inputs[1]).constant;
  EXPECT_EQ(w.dtype, DType::Float32());
  EXPECT_THAT(w.shape, ElementsAre(4, 3, 3, 3));
  EXPECT_FLOAT_EQ(static_cast<float>(w.values[5]), 0.05f);
  const TensorData& b = *g.value(conv.inputs[2]).constant;
  EXPECT_THAT(b.values, ElementsAre(1, 2, 3, 4));

  const graph::Value& c = g.value(conv.outputs[0]);
  EXPECT_TRUE(c.typed);
  EXPECT_EQ(graph::TensorTypeText(c.type), "f32[1,4,8,8]");
  EXPECT_EQ(c.producer, 0);
  const graph::Node& add = g.nodes()[2];
  EXPECT_EQ(add.inputs[0], g.nodes()[1].outputs[0]);
  EXPECT_EQ(add.inputs[1], g.nodes()[1].outputs[0]);
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.outputs()[0], add.outputs[0]);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
}

TEST(OnnxImporter, ImportsEveryOpsetFrom11To17) {
  for (int64_t opset = 11; opset <= 17; ++opset) {
    std::string path = ConvReluAdd(opset).Write("conv_opset.onnx");
    auto imported = ImportOnnxModel(path);
    EXPECT_TRUE(imported.ok())
        << "opset " << opset << ": " << imported.status();
  }
}

TEST(OnnxImporter, RefusesOpsetsOutside11To17NamingTheOpset) {
  for (int64_t opset : {10, 18}) {
    std::string path = ConvReluAdd(opset).Write("conv_bad_opset.onnx");
    auto imported = ImportOnnxModel(path);
    ASSERT_FALSE(imported.ok());
    EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(
        imported.status().message(),
        AllOf(HasSubstr(path), HasSubstr(absl::StrCat("opset ", opset))));
  }
}

TEST(OnnxImporter, ReadsAnOlderOpsetWhoseOperatorsAreUnchangedAt11) {
  TestModel m(9);
  m.Input("x", {1, 2, 4, 4});
  m.Node("Relu", {"x"}, {"r"});
  m.Node("GlobalAveragePool", {"r"}, {"y"});
  m.Output("y", {1, 2, 1, 1});
  auto imported = ImportOnnxModel(m.Write("opset9.onnx"));
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->nodes().size(), 2u);

  // Conv changed at opset 11: a Conv model at opset 10 is refused, naming
  // the node.
  std::string path = ConvReluAdd(10).Write("opset10.onnx");
  auto refused = ImportOnnxModel(path);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              AllOf(HasSubstr("opset 10"), HasSubstr("conv1")));
}

TEST(OnnxImporter, RefusesNodesOfOtherDomains) {
  TestModel m = ConvReluAdd(13);
  auto* import = m.model().add_opset_import();
  import->set_domain("com.microsoft");
  import->set_version(1);
  auto& node = m.Node("FusedGemm", {"y"}, {"z"}, "fused");
  node.set_domain("com.microsoft");
  auto imported = ImportOnnxModel(m.Write("domain.onnx"));
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(imported.status().message(),
              AllOf(HasSubstr("fused"), HasSubstr("com.microsoft")));
}

TEST(OnnxImporter, RefusesAnUnsupportedOperatorNamingNodeOpAndOpset) {
  TestModel m(13);
  m.Input("x", {1, 2, 4, 4});
  m.Node("Relu", {"x"}, {"r"}, "relu");
  m.Node("LpNormalization", {"r"}, {"y"}, "mystery_node");
  m.Output("y", {1, 2, 4, 4});
  auto imported = ImportOnnxModel(m.Write("unsupported.onnx"));
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(imported.status().message(),
              AllOf(HasSubstr("mystery_node"), HasSubstr("LpNormalization"),
                    HasSubstr("opset 13")));
}

TEST(OnnxImporter, RefusesAnOperatorOnnxDoesNotKnowBeforeTheChecker) {
  TestModel m(17);
  m.Input("x", {4});
  m.Node("NoSuchOp", {"x"}, {"y"});
  m.Output("y", {4});
  auto imported = ImportOnnxModel(m.Write("unknown_op.onnx"));
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(),
              AllOf(HasSubstr("NoSuchOp"), HasSubstr("#0"),
                    HasSubstr("opset 17"), HasSubstr("not supported")));
}

TEST(OnnxImporter, InitializersListedAsInputsAreConstants) {
  TestModel m = ConvReluAdd(11);
  auto* listed = m.graph().add_input();
  listed->set_name("w");
  onnx_test::SetShape(listed->mutable_type(), onnx::TensorProto::FLOAT,
                      {4, 3, 3, 3});
  auto imported = ImportOnnxModel(m.Write("listed.onnx"));
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_EQ(imported->inputs().size(), 1u);
  EXPECT_TRUE(imported->IsConstant(imported->nodes()[0].inputs[1]));
}

TEST(OnnxImporter, GivesUnnamedAndRepeatedNodesUniqueNames) {
  TestModel m(13);
  m.Input("x", {3});
  m.Node("Relu", {"x"}, {"a"});
  m.Node("Relu", {"a"}, {"b"});
  m.Node("Neg", {"b"}, {"c"}, "same");
  m.Node("Neg", {"c"}, {"y"}, "same");
  m.Output("y", {3});
  auto imported = ImportOnnxModel(m.Write("names.onnx"));
  ASSERT_TRUE(imported.ok()) << imported.status();
  std::set<std::string> names;
  for (const auto& node : imported->nodes()) {
    EXPECT_FALSE(node.name.empty());
    names.insert(node.name);
  }
  EXPECT_EQ(names.size(), 4u);
  EXPECT_EQ(imported->nodes()[2].name, "same");
}

TEST(OnnxImporter, SymbolicDimensionWithoutShapeIsRefusedNamingInputAndDim) {
  TestModel m(13);
  m.Input("tokens", {-1, 16}, onnx::TensorProto::FLOAT, {"batch"});
  m.Node("Relu", {"tokens"}, {"y"});
  m.Output("y", {-1, 16});
  auto imported = ImportOnnxModel(m.Write("symbolic.onnx"));
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(imported.status().message(),
              AllOf(HasSubstr("tokens"), HasSubstr("dimension 0"),
                    HasSubstr("batch"), HasSubstr("--shape")));
}

TEST(OnnxImporter, SymbolicDimensionTakesTheGivenShape) {
  TestModel m(13);
  m.Input("tokens", {-1, 16}, onnx::TensorProto::FLOAT, {"batch"});
  m.Node("Relu", {"tokens"}, {"y"});
  m.Output("y", {-1, 16});
  OnnxImportOptions options;
  options.input_shapes["tokens"] = {2, 16};
  auto imported = ImportOnnxModel(m.Write("symbolic.onnx"), options);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(graph::TensorTypeText(imported->value(imported->inputs()[0]).type),
            "f32[2,16]");
  const graph::Value& y = imported->value(imported->outputs()[0]);
  EXPECT_TRUE(y.typed);
  EXPECT_EQ(graph::TensorTypeText(y.type), "f32[2,16]");
}

TEST(OnnxImporter, RefusesShapesOfTheWrongRankContradictingOrUnknown) {
  TestModel m(13);
  m.Input("tokens", {-1, 16});
  m.Node("Relu", {"tokens"}, {"y"});
  m.Output("y", {-1, 16});
  std::string path = m.Write("symbolic.onnx");
  OnnxImportOptions rank;
  rank.input_shapes["tokens"] = {2, 16, 1};
  auto imported = ImportOnnxModel(path, rank);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(),
              AllOf(HasSubstr("tokens"), HasSubstr("rank 2")));

  OnnxImportOptions fixed;
  fixed.input_shapes["tokens"] = {2, 15};
  imported = ImportOnnxModel(path, fixed);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(),
              AllOf(HasSubstr("tokens"), HasSubstr("dimension 1")));

  OnnxImportOptions unknown;
  unknown.input_shapes["tokens"] = {2, 16};
  unknown.input_shapes["images"] = {1, 3};
  imported = ImportOnnxModel(path, unknown);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(),
              AllOf(HasSubstr("images"), HasSubstr("no input")));

  OnnxImportOptions negative;
  negative.input_shapes["tokens"] = {-2, 16};
  imported = ImportOnnxModel(path, negative);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(), HasSubstr("negative"));
}

// Shape -> Gather -> Concat -> Reshape, as PyTorch exports flattening: ONNX
// types the shape arithmetic; the Reshape's output stays untyped (ONNX 1.12
// does not propagate the computed shape into Reshape), which the graph's
// own type inference folds.
TEST(OnnxImporter, ShapeArithmeticIsTyped) {
  TestModel m(13);
  m.Input("x", {2, 3, 4});
  m.Int64s("zero", {0});
  m.Int64s("minus_one", {-1});
  m.Node("Shape", {"x"}, {"s"});
  auto& gather = m.Node("Gather", {"s", "zero"}, {"d0"});
  onnx_test::SetInt(gather, "axis", 0);
  auto& concat = m.Node("Concat", {"d0", "minus_one"}, {"shape"});
  onnx_test::SetInt(concat, "axis", 0);
  m.Node("Reshape", {"x", "shape"}, {"y"});
  m.Output("y", {-1, -1});
  auto imported = ImportOnnxModel(m.Write("shape_chain.onnx"));
  ASSERT_TRUE(imported.ok()) << imported.status();
  const graph::Node* reshape = FindNode(*imported, "Reshape");
  ASSERT_NE(reshape, nullptr);
  ASSERT_EQ(reshape->inputs.size(), 2u);
  const graph::Value& shape = imported->value(reshape->inputs[1]);
  EXPECT_TRUE(shape.typed);
  EXPECT_EQ(graph::TensorTypeText(shape.type), "i64[2]");
  EXPECT_EQ(
      graph::TensorTypeText(
          imported->value(FindNode(*imported, "Gather")->outputs[0]).type),
      "i64[1]");
  const graph::Value& y = imported->value(imported->outputs()[0]);
  EXPECT_EQ(y.type.dtype, DType::Float32());
}

TEST(OnnxImporter, UnknownShapesAreLeftUntyped) {
  // Reshape to a shape computed at run time from an input: ONNX cannot give
  // its output a static shape, so the value is untyped (not an error).
  TestModel m(13);
  m.Input("x", {2, 6});
  m.Input("shape", {2}, onnx::TensorProto::INT64);
  m.Node("Reshape", {"x", "shape"}, {"y"});
  m.Output("y", {-1, -1});
  auto imported = ImportOnnxModel(m.Write("untyped.onnx"));
  ASSERT_TRUE(imported.ok()) << imported.status();
  const graph::Value& y = imported->value(imported->outputs()[0]);
  EXPECT_FALSE(y.typed);
  EXPECT_EQ(y.type.dtype, DType::Float32());
}

TEST(OnnxImporter, ConstantInputsBecomeConstants) {
  TestModel m(13);
  m.Input("x", {2, 6});
  m.Input("shape", {2}, onnx::TensorProto::INT64);
  m.Node("Reshape", {"x", "shape"}, {"y"});
  m.Output("y", {-1, -1});
  std::string path = m.Write("constant_inputs.onnx");
  OnnxImportOptions options;
  TensorData shape(DType::Int64(), {2});
  shape.values = {3, 4};
  options.constant_inputs["shape"] = shape;
  auto imported = ImportOnnxModel(path, options);
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_EQ(imported->inputs().size(), 1u);
  EXPECT_EQ(imported->value(imported->inputs()[0]).name, "x");
  const graph::Node& reshape = imported->nodes()[0];
  ASSERT_TRUE(imported->IsConstant(reshape.inputs[1]));
  EXPECT_THAT(imported->value(reshape.inputs[1]).constant->values,
              ElementsAre(3, 4));
  // ONNX's shape inference now sees the shape.
  const graph::Value& y = imported->value(imported->outputs()[0]);
  EXPECT_TRUE(y.typed);
  EXPECT_EQ(graph::TensorTypeText(y.type), "f32[3,4]");

  OnnxImportOptions unknown;
  unknown.constant_inputs["shapes"] = shape;
  imported = ImportOnnxModel(path, unknown);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(),
              AllOf(HasSubstr("shapes"), HasSubstr("no graph input")));

  OnnxImportOptions wrong_type;
  TensorData floats(DType::Float32(), {2});
  wrong_type.constant_inputs["shape"] = floats;
  imported = ImportOnnxModel(path, wrong_type);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(
      imported.status().message(),
      AllOf(HasSubstr("shape"), HasSubstr("FLOAT"), HasSubstr("INT64")));

  OnnxImportOptions wrong_shape;
  wrong_shape.constant_inputs["shape"] = TensorData(DType::Int64(), {3});
  imported = ImportOnnxModel(path, wrong_shape);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(), HasSubstr("does not fit"));
}

class BadModelFile : public ::testing::Test {
 protected:
  std::string Path(const std::string& file) {
    return ::testing::TempDir() + file;
  }
};

TEST_F(BadModelFile, EmptyFile) {
  std::string path = Path("empty.onnx");
  onnx_test::WriteBytes(path, "");
  auto imported = ImportOnnxModel(path);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(),
              AllOf(HasSubstr(path), HasSubstr("empty")));
}

TEST_F(BadModelFile, RandomBytes) {
  std::string path = Path("random.onnx");
  std::string bytes;
  uint32_t state = 12345;
  for (int i = 0; i < 4096; ++i) {
    state = state * 1664525u + 1013904223u;
    bytes.push_back(static_cast<char>(state >> 24));
  }
  onnx_test::WriteBytes(path, bytes);
  auto imported = ImportOnnxModel(path);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(),
              AllOf(HasSubstr(path), HasSubstr("not an ONNX model")));
}

TEST_F(BadModelFile, TruncatedModel) {
  std::string whole;
  ConvReluAdd(13).model().SerializeToString(&whole);
  // Every cut is refused with one error naming the file, never a crash.
  for (size_t cut : {whole.size() / 3, whole.size() / 2, whole.size() - 7}) {
    std::string path = Path("truncated.onnx");
    onnx_test::WriteBytes(path, whole.substr(0, cut));
    auto imported = ImportOnnxModel(path);
    ASSERT_FALSE(imported.ok()) << "cut at " << cut;
    EXPECT_THAT(imported.status().message(), HasSubstr(path));
  }
}

TEST_F(BadModelFile, DirectoryAndMissingFile) {
  std::string dir = Path("a_folder.onnx");
  ::mkdir(dir.c_str(), 0755);
  auto imported = ImportOnnxModel(dir);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(),
              AllOf(HasSubstr(dir), HasSubstr("not a regular file")));
  imported = ImportOnnxModel(Path("no_such_model.onnx"));
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kNotFound);
}

TEST_F(BadModelFile, FileOverTheSizeLimitIsRefusedBeforeReading) {
  std::string path = ConvReluAdd(13).Write("big.onnx");
  OnnxImportOptions options;
  options.max_file_bytes = 100;
  auto imported = ImportOnnxModel(path, options);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(),
              AllOf(HasSubstr(path), HasSubstr("limit of 100")));
}

TEST_F(BadModelFile, HugeDeclaredTensorIsRefusedWithoutAllocating) {
  TestModel m(13);
  m.Input("x", {4});
  auto& huge = m.Weight("huge", {1 << 20, 1 << 20, 1 << 20}, {});
  huge.clear_raw_data();
  m.Node("Add", {"x", "huge"}, {"y"});
  m.Output("y", {4});
  auto imported = ImportOnnxModel(m.Write("huge.onnx"));
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(),
              AllOf(HasSubstr("huge"), HasSubstr("limit")));
}

TEST_F(BadModelFile, TensorDataNotMatchingItsShape) {
  TestModel m(13);
  m.Input("x", {4});
  m.Weight("short", {4}, {1, 2, 3});
  m.Node("Add", {"x", "short"}, {"y"});
  m.Output("y", {4});
  auto imported = ImportOnnxModel(m.Write("short.onnx"));
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(),
              AllOf(HasSubstr("short"), HasSubstr("needs 4 elements")));
}

TEST_F(BadModelFile, ExternalDataIsRefused) {
  TestModel m(13);
  m.Input("x", {4});
  auto& outside = m.Weight("outside", {4}, {});
  outside.clear_raw_data();
  outside.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = outside.add_external_data();
  entry->set_key("location");
  entry->set_value("weights.bin");
  m.Node("Add", {"x", "outside"}, {"y"});
  m.Output("y", {4});
  auto imported = ImportOnnxModel(m.Write("external.onnx"));
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(imported.status().message(),
              AllOf(HasSubstr("outside"), HasSubstr("external data")));
}

TEST_F(BadModelFile, UnsupportedElementTypeIsNamed) {
  TestModel m(13);
  m.Input("half", {4}, onnx::TensorProto::FLOAT16);
  m.Node("Relu", {"half"}, {"y"});
  m.Output("y", {4}, onnx::TensorProto::FLOAT16);
  auto imported = ImportOnnxModel(m.Write("half.onnx"));
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(imported.status().message(),
              AllOf(HasSubstr("half"), HasSubstr("FLOAT16")));
}

TEST_F(BadModelFile, SparseInitializersAreRefused) {
  TestModel m = ConvReluAdd(13);
  auto* sparse = m.graph().add_sparse_initializer();
  sparse->mutable_values()->set_name("sparse_w");
  sparse->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
  sparse->add_dims(4);
  auto imported = ImportOnnxModel(m.Write("sparse.onnx"));
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(imported.status().message(), HasSubstr("sparse_w"));
}

// Corrupted bytes of a valid model: each import succeeds or fails with an
// error naming the file; none crashes.
TEST_F(BadModelFile, CorruptedBytesNeverCrash) {
  std::string whole;
  ConvReluAdd(13).model().SerializeToString(&whole);
  uint32_t state = 7;
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  std::string path = Path("corrupted.onnx");
  int refused = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes = whole;
    // Only the structure (the first bytes), not the weights' raw data.
    const size_t span = std::min<size_t>(bytes.size(), 400);
    for (int flips = 1 + trial % 4; flips > 0; --flips) {
      bytes[next() % span] = static_cast<char>(next());
    }
    onnx_test::WriteBytes(path, bytes);
    auto imported = ImportOnnxModel(path);
    if (!imported.ok()) {
      ++refused;
      EXPECT_THAT(imported.status().message(), HasSubstr(path));
    }
  }
  EXPECT_GT(refused, 0);
}

TEST_F(BadModelFile, ModelTheCheckerRejects) {
  TestModel m(13);
  m.Input("x", {4});
  m.Node("Relu", {"x"}, {"y"});
  m.Node("Relu", {"x"}, {"y"});  // two producers of y
  m.Output("y", {4});
  auto imported = ImportOnnxModel(m.Write("invalid.onnx"));
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(), HasSubstr("not a valid ONNX model"));
}

}  // namespace
}  // namespace lathe
