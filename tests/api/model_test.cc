#include "api/model.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "compiler/codegen/cpu_target.h"
#include "tests/api/test_database.h"

namespace lathe::api {
namespace {

using graph::Graph;
using graph::Node;
using graph::TensorType;

TensorType F32(std::vector<int64_t> shape) {
  return TensorType{DType::Float32(), std::move(shape)};
}

TensorData Tensor(std::vector<int64_t> shape, std::vector<double> values,
                  DType dtype = DType::Float32()) {
  TensorData data(dtype, std::move(shape));
  data.values = std::move(values);
  return data;
}

void AddNode(Graph& graph, const std::string& op, std::vector<int> inputs,
             std::vector<int> outputs,
             std::map<std::string, graph::Attr> attrs = {}) {
  Node node;
  node.op = op;
  node.name = op + std::to_string(graph.nodes().size());
  node.inputs = std::move(inputs);
  node.outputs = std::move(outputs);
  node.attrs = std::move(attrs);
  graph.AddNode(std::move(node));
}

// y = relu(a + b) viewed as [3,2]; z = y * 2 as a second output.
Graph AddReluGraph() {
  Graph graph;
  int a = graph.AddValue("a", F32({2, 3}));
  int b = graph.AddValue("b", F32({2, 3}));
  graph.AddInput(a);
  graph.AddInput(b);
  int sum = graph.AddValue("sum", F32({2, 3}));
  int relu = graph.AddValue("relu", F32({2, 3}));
  int shape = graph.AddConstant("shape", Tensor({2}, {3, 2}, DType::Int64()));
  int y = graph.AddValue("y", F32({3, 2}));
  int two = graph.AddConstant("two", Tensor({}, {2}));
  int z = graph.AddValue("z", F32({3, 2}));
  AddNode(graph, "Add", {a, b}, {sum});
  AddNode(graph, "Relu", {sum}, {relu});
  AddNode(graph, "Reshape", {relu, shape}, {y}, {{"allowzero", int64_t{0}}});
  AddNode(graph, "Mul", {y, two}, {z});
  graph.AddOutput(y);
  graph.AddOutput(z);
  return graph;
}

TEST(Model, RunsTheGraphOnItsKernels) {
  absl::StatusOr<std::unique_ptr<Model>> model =
      Model::FromGraph(AddReluGraph());
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ((*model)->inputs().size(), 2u);
  EXPECT_EQ((*model)->inputs()[1].name, "b");
  TensorData a = Tensor({2, 3}, {1, -2, 3, -4, 5, -6});
  TensorData b = Tensor({2, 3}, {0.5, 1, -4, 1, 0, 7});
  absl::StatusOr<std::vector<TensorData>> outputs = (*model)->Run({a, b});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  ASSERT_EQ(outputs->size(), 2u);
  EXPECT_EQ((*outputs)[0].shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ((*outputs)[0].values, (std::vector<double>{1.5, 0, 0, 0, 5, 1}));
  EXPECT_EQ((*outputs)[1].values, (std::vector<double>{3, 0, 0, 0, 10, 2}));
  // A second run on other inputs gives its own results.
  outputs = (*model)->Run({b, a});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_EQ((*outputs)[0].values, (std::vector<double>{1.5, 0, 0, 0, 5, 1}));

  const ModelStats& stats = (*model)->stats();
  EXPECT_GE(stats.kernel_steps, 1);
  EXPECT_EQ(stats.kernels_tuned, 0);
  EXPECT_EQ(stats.kernels_default, stats.distinct_kernels);
  EXPECT_EQ(stats.distinct_kernels,
            static_cast<int>((*model)->kernels().size()));
}

TEST(Model, IntermediatesShareTheArenaAndStayCorrect) {
  // x @ W1 @ W2 @ W3 @ W4 with W_k = k * I: the first product's bytes are
  // reused by the third, and the result is still 24 x.
  constexpr int64_t n = 16;
  Graph graph;
  int x = graph.AddValue("x", F32({n, n}));
  graph.AddInput(x);
  int previous = x;
  for (int k = 1; k <= 4; ++k) {
    TensorData w(DType::Float32(), {n, n});
    for (int64_t i = 0; i < n; ++i) w.values[i * n + i] = k;
    int weight = graph.AddConstant("w" + std::to_string(k), std::move(w));
    int product = graph.AddValue("p" + std::to_string(k), F32({n, n}));
    AddNode(graph, "MatMul", {previous, weight}, {product});
    previous = product;
  }
  graph.AddOutput(previous);
  absl::StatusOr<std::unique_ptr<Model>> model =
      Model::FromGraph(std::move(graph));
  ASSERT_TRUE(model.ok()) << model.status();
  const ModelStats& stats = (*model)->stats();
  EXPECT_EQ(stats.kernel_steps, 4);
  EXPECT_EQ(stats.unshared_intermediate_bytes, 3 * n * n * 4);
  EXPECT_EQ(stats.peak_intermediate_bytes, 2 * n * n * 4);
  TensorData input(DType::Float32(), {n, n});
  for (int64_t i = 0; i < n * n; ++i) input.values[i] = i % 7 - 3;
  absl::StatusOr<std::vector<TensorData>> outputs = (*model)->Run({input});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  for (int64_t i = 0; i < n * n; ++i) {
    ASSERT_EQ((*outputs)[0].values[i], 24 * input.values[i]) << "at " << i;
  }
}

// y = x[16,8] @ w[8,48] with w a constant of values 0..modulus-1 shifted
// by -shift; `weight` is w's value id.
struct ConstantProduct {
  Graph graph;
  TensorData weights;
  int weight = 0;
  int product = 0;
};
ConstantProduct MakeConstantProduct(int64_t step, int64_t modulus,
                                    int64_t shift) {
  ConstantProduct c;
  int x = c.graph.AddValue("x", F32({16, 8}));
  c.graph.AddInput(x);
  c.weights = TensorData(DType::Float32(), {8, 48});
  for (int64_t i = 0; i < c.weights.size(); ++i)
    c.weights.values[i] = (i * step % modulus) - shift;
  c.weight = c.graph.AddConstant("w", c.weights);
  c.product = c.graph.AddValue("y", F32({16, 48}));
  AddNode(c.graph, "MatMul", {x, c.weight}, {c.product});
  c.graph.AddOutput(c.product);
  return c;
}

// x @ weights for x [16,8] row-major, exact in double.
std::vector<double> ExpectedProduct(const std::vector<double>& x,
                                    const TensorData& weights) {
  std::vector<double> y(16 * 48, 0.0);
  for (int64_t i = 0; i < 16; ++i)
    for (int64_t j = 0; j < 48; ++j)
      for (int64_t k = 0; k < 8; ++k)
        y[i * 48 + j] += x[i * 8 + k] * weights.values[k * 48 + j];
  return y;
}

// The model of `graph` on a database (in `dir`) whose record for the one
// kernel, `workload`, packs its constant operand.
absl::StatusOr<std::unique_ptr<Model>> LoadWithPackingRecord(
    const Graph& graph, const std::string& workload, const TempFolder& dir) {
  ModelOptions options;
  options.db_path = dir.path() + "/t.db";
  options.target = "host -num-threads=1";
  CreateDatabase(options.db_path,
                 {PackingRecord(workload, HostTarget(1), "out")});
  return Model::FromGraph(graph, options);
}

// y = x @ w with w a constant: the kernel's workload declares w `const`;
// with a record whose schedule packs w, the model packs it once at load,
// and every Run computes x @ w from the packed form.
TEST(Model, ConstantWeightsArePackedOnceAtLoad) {
  const ConstantProduct c = MakeConstantProduct(7, 11, 5);
  absl::StatusOr<std::unique_ptr<Model>> untuned = Model::FromGraph(c.graph);
  ASSERT_TRUE(untuned.ok()) << untuned.status();
  ASSERT_EQ((*untuned)->kernels().size(), 1u);
  const std::string workload = (*untuned)->kernels().begin()->first;
  EXPECT_NE(workload.find("input in1[8,48] const;"), std::string::npos)
      << workload;
  EXPECT_TRUE((*untuned)->kernels().begin()->second.packed_inputs().empty());

  TempFolder dir;
  absl::StatusOr<std::unique_ptr<Model>> model =
      LoadWithPackingRecord(c.graph, workload, dir);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->stats().kernels_tuned, 1);
  const Kernel& kernel = (*model)->kernels().begin()->second;
  ASSERT_EQ(kernel.packed_inputs().size(), 1u);
  EXPECT_EQ(kernel.packed_inputs()[0].packed_shape,
            (std::vector<int64_t>{3, 8, 16}));
  for (int run = 0; run < 2; ++run) {
    TensorData input(DType::Float32(), {16, 8});
    for (int64_t i = 0; i < input.size(); ++i)
      input.values[i] = (i * (run + 3) % 9) - 4;
    absl::StatusOr<std::vector<TensorData>> outputs = (*model)->Run({input});
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    const std::vector<double> want = ExpectedProduct(input.values, c.weights);
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ((*outputs)[0].values[i], want[i])
          << "run " << run << " at " << i;
    }
  }
}

// w is read packed by the product's kernel and as plain floats as the
// model's second output: both forms are kept, each where its reader finds
// it (a packed kernel never gets the plain floats, nor the output the
// packed ones).
TEST(Model, AConstantReadPackedAndPlainKeepsBothForms) {
  ConstantProduct c = MakeConstantProduct(5, 13, 6);
  c.graph.AddOutput(c.weight);
  absl::StatusOr<std::unique_ptr<Model>> untuned = Model::FromGraph(c.graph);
  ASSERT_TRUE(untuned.ok()) << untuned.status();
  TempFolder dir;
  absl::StatusOr<std::unique_ptr<Model>> model =
      LoadWithPackingRecord(c.graph, (*untuned)->kernels().begin()->first, dir);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ((*model)->kernels().begin()->second.packed_inputs().size(), 1u);

  std::vector<float> input(16 * 8), product(16 * 48), plain(8 * 48);
  for (size_t i = 0; i < input.size(); ++i) input[i] = (i * 3 % 7) - 3.0f;
  ASSERT_TRUE((*model)
                  ->RunFloat({absl::MakeConstSpan(input)},
                             {absl::MakeSpan(product), absl::MakeSpan(plain)})
                  .ok());
  for (int64_t i = 0; i < c.weights.size(); ++i) {
    ASSERT_EQ(plain[i], c.weights.values[i]) << "w at " << i;
  }
  const std::vector<double> want = ExpectedProduct(
      std::vector<double>(input.begin(), input.end()), c.weights);
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(product[i], want[i]) << "y at " << i;
  }
}

TEST(Model, RefusesInputsOfTheWrongCountDtypeOrShapeNamingThem) {
  absl::StatusOr<std::unique_ptr<Model>> model =
      Model::FromGraph(AddReluGraph());
  ASSERT_TRUE(model.ok()) << model.status();
  TensorData good = Tensor({2, 3}, {1, 2, 3, 4, 5, 6});

  absl::StatusOr<std::vector<TensorData>> outputs = (*model)->Run({good});
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(outputs.status().message().find("missing \"b\""), std::string::npos)
      << outputs.status();

  outputs = (*model)->Run({good, Tensor({3, 2}, {1, 2, 3, 4, 5, 6})});
  ASSERT_FALSE(outputs.ok());
  EXPECT_NE(outputs.status().message().find("\"b\": expected f32[2,3]"),
            std::string::npos)
      << outputs.status();

  outputs =
      (*model)->Run({Tensor({2, 3}, {1, 2, 3, 4, 5, 6}, DType::Int64()), good});
  ASSERT_FALSE(outputs.ok());
  EXPECT_NE(outputs.status().message().find("\"a\""), std::string::npos)
      << outputs.status();
}

// c = Cast(relu(x), int64) of x: f32[4].
absl::StatusOr<std::unique_ptr<Model>> ReluThenCastToInt64() {
  Graph graph;
  int x = graph.AddValue("x", F32({4}));
  graph.AddInput(x);
  int relu = graph.AddValue("relu", F32({4}));
  int c = graph.AddValue("c", TensorType{DType::Int64(), {4}});
  AddNode(graph, "Relu", {x}, {relu});
  AddNode(graph, "Cast", {relu}, {c}, {{"to", int64_t{7}}});
  graph.AddOutput(c);
  return Model::FromGraph(std::move(graph));
}

TEST(Model, RunsNonFloatWorkOnTheHost) {
  // The cast is no kernel.
  absl::StatusOr<std::unique_ptr<Model>> model = ReluThenCastToInt64();
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_GE((*model)->stats().host_steps, 1);
  absl::StatusOr<std::vector<TensorData>> outputs =
      (*model)->Run({Tensor({4}, {-1.5, 2.7, 3, -0.2})});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_EQ((*outputs)[0].dtype, DType::Int64());
  EXPECT_EQ((*outputs)[0].values, (std::vector<double>{0, 2, 3, 0}));
  // The next call on the same workspace computes its host values afresh.
  outputs = (*model)->Run({Tensor({4}, {5.5, -2, 1, 4})});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_EQ((*outputs)[0].values, (std::vector<double>{5, 0, 1, 4}));
  EXPECT_EQ((*model)->workspaces(), 1);
}

// x reshaped to the shape an int64 input gives.
Graph ReshapeByInputGraph() {
  Graph graph;
  int x = graph.AddValue("x", F32({6}));
  int shape = graph.AddValue("shape", TensorType{DType::Int64(), {2}});
  graph.AddInput(x);
  graph.AddInput(shape);
  int y = graph.AddValue("y", F32({}));
  graph.value(y).typed = false;
  AddNode(graph, "Reshape", {x, shape}, {y}, {{"allowzero", int64_t{0}}});
  graph.AddOutput(y);
  return graph;
}

TEST(Model, InputValuesKnownAtLoadFoldAsConstants) {
  EXPECT_FALSE(Model::FromGraph(ReshapeByInputGraph()).ok());
  ModelOptions options;
  options.input_values["shape"] = Tensor({2}, {3, -1}, DType::Int64());
  absl::StatusOr<std::unique_ptr<Model>> model =
      Model::FromGraph(ReshapeByInputGraph(), options);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ((*model)->inputs().size(), 1u);
  EXPECT_EQ((*model)->inputs()[0].name, "x");
  absl::StatusOr<std::vector<TensorData>> outputs =
      (*model)->Run({Tensor({6}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_EQ((*outputs)[0].shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ((*outputs)[0].values, (std::vector<double>{1, 2, 3, 4, 5, 6}));

  options.input_values["shape"] = Tensor({3}, {3, 1, 2}, DType::Int64());
  absl::StatusOr<std::unique_ptr<Model>> refused =
      Model::FromGraph(ReshapeByInputGraph(), options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("\"shape\": expected i64[2]"),
            std::string::npos)
      << refused.status();
  options.input_values.clear();
  options.input_values["nothing"] = Tensor({2}, {3, 2}, DType::Int64());
  refused = Model::FromGraph(ReshapeByInputGraph(), options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("no input \"nothing\""),
            std::string::npos)
      << refused.status();
}

TEST(Model, RefusesADatabaseThatDoesNotOpen) {
  ModelOptions options;
  options.db_path = "/nonexistent/folder/tuned.db";
  absl::StatusOr<std::unique_ptr<Model>> model =
      Model::FromGraph(AddReluGraph(), options);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("tuned.db"), std::string::npos)
      << model.status();
}

// The values of a Run output as floats.
std::vector<float> Floats(const TensorData& data) {
  return std::vector<float>(data.values.begin(), data.values.end());
}

// x (1x3x8x8) -> Conv(4 filters, 3x3, pad 1) -> Relu -> Flatten: a kernel
// whose output reaches a graph output through a view, and the same Relu'd
// activation read again by a second output's kernel.
Graph ConvFlattenGraph() {
  Graph graph;
  int x = graph.AddValue("x", F32({1, 3, 8, 8}));
  graph.AddInput(x);
  TensorData w(DType::Float32(), {4, 3, 3, 3});
  for (int64_t i = 0; i < w.size(); ++i) w.values[i] = (i % 5 - 2) * 0.25;
  int weight = graph.AddConstant("w", std::move(w));
  int conv = graph.AddValue("conv", F32({1, 4, 8, 8}));
  int relu = graph.AddValue("relu", F32({1, 4, 8, 8}));
  int flat = graph.AddValue("flat", F32({1, 256}));
  int half = graph.AddConstant("half", Tensor({}, {0.5}));
  int scaled = graph.AddValue("scaled", F32({1, 4, 8, 8}));
  AddNode(graph, "Conv", {x, weight}, {conv},
          {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  AddNode(graph, "Relu", {conv}, {relu});
  AddNode(graph, "Flatten", {relu}, {flat}, {{"axis", int64_t{1}}});
  AddNode(graph, "Mul", {relu, half}, {scaled});
  graph.AddOutput(flat);
  graph.AddOutput(scaled);
  return graph;
}

TensorData RandomLike(const ModelTensor& tensor, int seed) {
  TensorData data(tensor.type.dtype, tensor.type.shape);
  for (int64_t i = 0; i < data.size(); ++i) {
    data.values[i] = ((i * 7 + seed * 13) % 17 - 8) / 4.0;
  }
  return data;
}

// Runs `model` through RunFloat on `inputs` (converted to floats) and
// returns its outputs, failing the test on an error.
std::vector<std::vector<float>> RunFloatOn(
    const Model& model, const std::vector<TensorData>& inputs,
    std::vector<double>* step_seconds = nullptr) {
  std::vector<std::vector<float>> in;
  for (const TensorData& data : inputs) in.push_back(Floats(data));
  std::vector<std::vector<float>> out;
  for (const ModelTensor& tensor : model.outputs()) {
    out.emplace_back(tensor.type.NumElements(), -1234.5f);
  }
  std::vector<absl::Span<const float>> in_spans(in.begin(), in.end());
  std::vector<absl::Span<float>> out_spans;
  for (std::vector<float>& o : out) out_spans.push_back(absl::MakeSpan(o));
  absl::Status status = model.RunFloat(in_spans, out_spans, step_seconds);
  EXPECT_TRUE(status.ok()) << status;
  return out;
}

TEST(Model, RunFloatGivesRunsOutputs) {
  for (Graph (*make)() : {&AddReluGraph, &ConvFlattenGraph}) {
    absl::StatusOr<std::unique_ptr<Model>> model = Model::FromGraph(make());
    ASSERT_TRUE(model.ok()) << model.status();
    std::vector<TensorData> inputs;
    for (size_t i = 0; i < (*model)->inputs().size(); ++i) {
      inputs.push_back(RandomLike((*model)->inputs()[i], i + 1));
    }
    absl::StatusOr<std::vector<TensorData>> expected = (*model)->Run(inputs);
    ASSERT_TRUE(expected.ok()) << expected.status();
    std::vector<std::vector<float>> outputs = RunFloatOn(**model, inputs);
    ASSERT_EQ(outputs.size(), expected->size());
    for (size_t o = 0; o < outputs.size(); ++o) {
      EXPECT_EQ(outputs[o], Floats((*expected)[o])) << "output " << o;
    }
  }
}

TEST(Model, RunFloatOutputThatIsAnInputOrAConstantIsCopied) {
  // Outputs: the input itself, a constant, and a view of the input.
  Graph graph;
  int x = graph.AddValue("x", F32({2, 2}));
  graph.AddInput(x);
  int c = graph.AddConstant("c", Tensor({2}, {3, 4}));
  int shape = graph.AddConstant("shape", Tensor({1}, {4}, DType::Int64()));
  int flat = graph.AddValue("flat", F32({4}));
  AddNode(graph, "Reshape", {x, shape}, {flat}, {{"allowzero", int64_t{0}}});
  graph.AddOutput(x);
  graph.AddOutput(c);
  graph.AddOutput(flat);
  absl::StatusOr<std::unique_ptr<Model>> model =
      Model::FromGraph(std::move(graph));
  ASSERT_TRUE(model.ok()) << model.status();
  std::vector<std::vector<float>> outputs =
      RunFloatOn(**model, {Tensor({2, 2}, {1, 2, 5, 6})});
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_EQ(outputs[0], (std::vector<float>{1, 2, 5, 6}));
  EXPECT_EQ(outputs[1], (std::vector<float>{3, 4}));
  EXPECT_EQ(outputs[2], (std::vector<float>{1, 2, 5, 6}));
}

TEST(Model, RunFloatRefusesWrongCountsAndSizesNamingTheTensor) {
  absl::StatusOr<std::unique_ptr<Model>> model =
      Model::FromGraph(AddReluGraph());
  ASSERT_TRUE(model.ok()) << model.status();
  std::vector<float> six(6, 1.0f), five(5, 1.0f), y(6), z(6);
  auto message = [&](std::vector<absl::Span<const float>> in,
                     std::vector<absl::Span<float>> out) {
    absl::Status status = (*model)->RunFloat(in, out);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    return std::string(status.message());
  };
  EXPECT_NE(message({six}, {absl::MakeSpan(y), absl::MakeSpan(z)})
                .find("2 input(s), got 1: missing \"b\""),
            std::string::npos);
  EXPECT_NE(message({six, six}, {absl::MakeSpan(y)})
                .find("2 output(s), got 1: missing \"z\""),
            std::string::npos);
  EXPECT_NE(message({six, five}, {absl::MakeSpan(y), absl::MakeSpan(z)})
                .find("input 1 \"b\": 5 floats given for f32[2,3] (6)"),
            std::string::npos);
  EXPECT_NE(message({six, six}, {absl::MakeSpan(y), absl::MakeSpan(five)})
                .find("output 1 \"z\": 5 floats given for f32[3,2] (6)"),
            std::string::npos);
}

TEST(Model, RunFloatRefusesTensorsThatAreNotFloat32) {
  // An int64 output.
  absl::StatusOr<std::unique_ptr<Model>> model = ReluThenCastToInt64();
  ASSERT_TRUE(model.ok()) << model.status();
  std::vector<float> in(4), out(4);
  absl::Status status =
      (*model)->RunFloat({absl::MakeConstSpan(in)}, {absl::MakeSpan(out)});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("output 0 \"c\" is i64[4]"),
            std::string::npos)
      << status;
}

TEST(Model, RepeatedCallsReuseOneWorkspaceAndAgree) {
  absl::StatusOr<std::unique_ptr<Model>> model =
      Model::FromGraph(ConvFlattenGraph());
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->workspaces(), 0);
  TensorData a = RandomLike((*model)->inputs()[0], 1);
  TensorData b = RandomLike((*model)->inputs()[0], 2);
  std::vector<std::vector<float>> first = RunFloatOn(**model, {a});
  std::vector<std::vector<float>> other = RunFloatOn(**model, {b});
  EXPECT_NE(first, other);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(RunFloatOn(**model, {a}), first) << "call " << i;
    absl::StatusOr<std::vector<TensorData>> run = (*model)->Run({b});
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_EQ(Floats((*run)[0]), other[0]);
  }
  EXPECT_EQ((*model)->workspaces(), 1);
}

TEST(Model, TwoThreadsRunAtOnceEachWithItsOwnResults) {
  absl::StatusOr<std::unique_ptr<Model>> model =
      Model::FromGraph(ConvFlattenGraph());
  ASSERT_TRUE(model.ok()) << model.status();
  const Model& m = **model;
  std::vector<TensorData> inputs = {RandomLike(m.inputs()[0], 1),
                                    RandomLike(m.inputs()[0], 2)};
  std::vector<std::vector<std::vector<float>>> expected;
  for (const TensorData& input : inputs) {
    expected.push_back(RunFloatOn(m, {input}));
  }
  std::vector<int> mismatches(2, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        if (RunFloatOn(m, {inputs[t]}) != expected[t]) ++mismatches[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, (std::vector<int>{0, 0}));
  EXPECT_GE(m.workspaces(), 1);
  EXPECT_LE(m.workspaces(), 2);
}

TEST(Model, StepTimesOnePerStepWhenAsked) {
  absl::StatusOr<std::unique_ptr<Model>> model =
      Model::FromGraph(ConvFlattenGraph());
  ASSERT_TRUE(model.ok()) << model.status();
  const Model& m = **model;
  const size_t steps = m.partition().steps.size();
  int kernel_steps = 0;
  for (const graph::GraphStep& step : m.partition().steps) {
    kernel_steps += step.kind == graph::GraphStep::Kind::kKernel;
  }
  EXPECT_EQ(kernel_steps, m.stats().kernel_steps);
  EXPECT_GE(kernel_steps, 2);
  EXPECT_GE(m.stats().alias_steps, 1);

  std::vector<double> seconds = {-1.0};
  TensorData input = RandomLike(m.inputs()[0], 1);
  std::vector<std::vector<float>> timed = RunFloatOn(m, {input}, &seconds);
  ASSERT_EQ(seconds.size(), steps);
  for (size_t s = 0; s < steps; ++s) {
    EXPECT_GE(seconds[s], 0.0) << "step " << s;
    // A kernel's call takes time the clock sees.
    if (m.partition().steps[s].kind == graph::GraphStep::Kind::kKernel) {
      EXPECT_GT(seconds[s], 0.0) << "step " << s;
    }
  }
  EXPECT_EQ(timed, RunFloatOn(m, {input}));

  seconds.clear();
  absl::StatusOr<std::vector<TensorData>> run = m.Run({input}, &seconds);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(seconds.size(), steps);
  for (double s : seconds) EXPECT_GE(s, 0.0);
}

}  // namespace
}  // namespace lathe::api
