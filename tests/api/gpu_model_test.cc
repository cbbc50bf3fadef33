// Tests of api/gpu_model.h on an emulated GPU (emulated_model_device.h):
// every kernel goes through the GPU schedule, CUDA C and NVRTC as on a
// device, then runs on the CPU; the results are checked against the
// graph's host evaluation.
#include "api/gpu_model.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "compiler/codegen/cuda/cuda_driver.h"
#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/codegen/cuda/nvrtc_compiler.h"
#include "compiler/interp/allclose.h"
#include "tests/api/emulated_model_device.h"
#include "tests/api/test_database.h"
#include "tests/compiler/graph/graph_builder.h"
#include "tests/compiler/graph/run_on_host.h"

namespace lathe::api {
namespace {

using graph::Graph;
using graph::testing::F32;
using graph::testing::Floats;
using graph::testing::GraphBuilder;
using graph::testing::Ints;
using testing::EmulatedModelDevice;

// Every kernel goes through NVRTC, as on a device.
class GpuModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (absl::Status nvrtc = cuda::CheckNvrtc(); !nvrtc.ok()) {
      GTEST_SKIP() << nvrtc;
    }
  }
};

TensorData Pattern(std::vector<int64_t> shape, int seed) {
  TensorData data(DType::Float32(), std::move(shape));
  for (int64_t i = 0; i < data.size(); ++i) {
    data.values[i] = ((i * 7 + seed * 13) % 17 - 8) / 4.0;
  }
  return data;
}

struct Loaded {
  std::shared_ptr<EmulatedModelDevice> device;
  std::unique_ptr<GpuModel> model;
};

Loaded LoadOnEmulation(Graph graph, GpuModelOptions options = {}) {
  Loaded loaded;
  loaded.device = std::make_shared<EmulatedModelDevice>();
  options.device = loaded.device;
  absl::StatusOr<std::unique_ptr<GpuModel>> model =
      GpuModel::FromGraph(std::move(graph), options);
  EXPECT_TRUE(model.ok()) << model.status();
  if (model.ok()) loaded.model = *std::move(model);
  return loaded;
}

// Runs `graph` on the emulated GPU and on the host and compares every
// output; returns the loaded model.
Loaded ExpectRunsAsOnTheHost(const Graph& graph,
                             const std::vector<TensorData>& inputs) {
  std::vector<TensorData> expected = graph::testing::RunOnHost(graph, inputs);
  Loaded loaded = LoadOnEmulation(graph);
  if (loaded.model == nullptr) return loaded;
  absl::StatusOr<std::vector<TensorData>> outputs = loaded.model->Run(inputs);
  EXPECT_TRUE(outputs.ok()) << outputs.status();
  if (!outputs.ok()) return loaded;
  EXPECT_EQ(outputs->size(), expected.size());
  for (size_t i = 0; i < outputs->size() && i < expected.size(); ++i) {
    EXPECT_EQ((*outputs)[i].shape, expected[i].shape) << "output " << i;
    absl::Status close =
        CheckAllClose((*outputs)[i], expected[i], 1e-4, 1e-4, "output");
    EXPECT_TRUE(close.ok()) << "output " << i << ": " << close;
  }
  return loaded;
}

// conv 3x3 (pad 1) + bias, relu, max pool, flatten, dense + bias, softmax.
Graph SmallCnn() {
  GraphBuilder b;
  int x = b.Input("x", F32({1, 3, 8, 8}));
  int w = b.Const("w", Pattern({4, 3, 3, 3}, 1));
  int bias = b.Const("bias", Pattern({4}, 2));
  int conv = b.Add1("Conv", {x, w, bias},
                    {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  int relu = b.Add1("Relu", {conv});
  int pool = b.Add1("MaxPool", {relu},
                    {{"kernel_shape", std::vector<int64_t>{2, 2}},
                     {"strides", std::vector<int64_t>{2, 2}}});
  int flat = b.Add1("Flatten", {pool}, {{"axis", int64_t{1}}});
  int dense_w = b.Const("dense_w", Pattern({10, 64}, 3));
  int dense_b = b.Const("dense_b", Pattern({10}, 4));
  int dense =
      b.Add1("Gemm", {flat, dense_w, dense_b}, {{"transB", int64_t{1}}});
  int probs = b.Add1("Softmax", {dense}, {{"axis", int64_t{1}}});
  b.Output(probs);
  return b.graph;
}

TEST_F(GpuModelTest, RunsACnnAsTheHostEvaluatesIt) {
  Loaded loaded = ExpectRunsAsOnTheHost(SmallCnn(), {Pattern({1, 3, 8, 8}, 5)});
  ASSERT_NE(loaded.model, nullptr);
  const ModelStats& stats = loaded.model->stats();
  EXPECT_GE(stats.kernel_steps, 2);
  EXPECT_EQ(stats.kernels_default, stats.distinct_kernels);
  EXPECT_EQ(stats.kernels_tuned, 0);
  EXPECT_EQ(loaded.device->modules_loaded, stats.distinct_kernels);
  EXPECT_GT(stats.constant_bytes, 0);

  // A second run on other inputs: only the input goes to the device (the
  // constants went once, at load), only the output comes back.
  const int to_device = loaded.device->copies_to_device;
  const int to_host = loaded.device->copies_to_host;
  const int launches = loaded.device->launches;
  Graph graph = SmallCnn();
  TensorData other = Pattern({1, 3, 8, 8}, 9);
  std::vector<TensorData> expected = graph::testing::RunOnHost(graph, {other});
  absl::StatusOr<std::vector<TensorData>> outputs = loaded.model->Run({other});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_TRUE(
      CheckAllClose((*outputs)[0], expected[0], 1e-4, 1e-4, "output").ok());
  EXPECT_EQ(loaded.device->copies_to_device - to_device, 1);
  EXPECT_EQ(loaded.device->copies_to_host - to_host, 1);
  EXPECT_EQ(loaded.device->launches - launches, stats.kernel_steps);
}

TEST_F(GpuModelTest, IntermediatesShareTheArenaOnTheDevice) {
  // x @ W1 @ W2 @ W3 @ W4 with W_k = k * I: the first product's bytes are
  // reused by the third (the emulation fills new memory with NaN, so a
  // read of bytes no step wrote shows), and the result is 24 x.
  constexpr int64_t n = 16;
  GraphBuilder b;
  int previous = b.Input("x", F32({n, n}));
  for (int k = 1; k <= 4; ++k) {
    TensorData w(DType::Float32(), {n, n});
    for (int64_t i = 0; i < n; ++i) w.values[i * n + i] = k;
    previous =
        b.Add1("MatMul", {previous, b.Const("w" + std::to_string(k), w)});
  }
  b.Output(previous);
  TensorData x = Pattern({n, n}, 1);
  Loaded loaded = ExpectRunsAsOnTheHost(b.graph, {x});
  ASSERT_NE(loaded.model, nullptr);
  EXPECT_EQ(loaded.model->stats().peak_intermediate_bytes, 2 * n * n * 4);
  EXPECT_EQ(loaded.model->stats().unshared_intermediate_bytes, 3 * n * n * 4);
}

TEST_F(GpuModelTest, IntermediatesAliveTogetherKeepApart) {
  // p = x @ W1 and q = x @ W2 are both read by p @ q: their bytes in the
  // arena must not overlap.
  constexpr int64_t n = 16;
  GraphBuilder b;
  int x = b.Input("x", F32({n, n}));
  int p = b.Add1("MatMul", {x, b.Const("w1", Pattern({n, n}, 1))});
  int q = b.Add1("MatMul", {x, b.Const("w2", Pattern({n, n}, 2))});
  b.Output(b.Add1("MatMul", {p, q}));
  Loaded loaded = ExpectRunsAsOnTheHost(b.graph, {Pattern({n, n}, 3)});
  ASSERT_NE(loaded.model, nullptr);
  EXPECT_EQ(loaded.model->stats().peak_intermediate_bytes, 2 * n * n * 4);
}

TEST_F(GpuModelTest, ViewsShareTheirInputsBytesAndEveryOutputComesBack) {
  // y = relu(a + b) viewed as [3,2] (a view of a kernel's output, itself an
  // output), z = y * 2 read from the view.
  GraphBuilder b;
  int a = b.Input("a", F32({2, 3}));
  int c = b.Input("b", F32({2, 3}));
  int relu = b.Add1("Relu", {b.Add1("Add", {a, c})});
  int y = b.Add1("Reshape", {relu, b.Const("shape", Ints({3, 2}))});
  int z = b.Add1("Mul", {y, b.Const("two", graph::testing::Scalar(2))});
  b.Output(y);
  b.Output(z);
  Loaded loaded =
      ExpectRunsAsOnTheHost(b.graph, {Pattern({2, 3}, 1), Pattern({2, 3}, 2)});
  ASSERT_NE(loaded.model, nullptr);
  EXPECT_GE(loaded.model->stats().alias_steps, 1);
}

TEST_F(GpuModelTest, HostStepsReadAndWriteTheDevicesTensors) {
  // A float32 tensor made on the host (Cast of an int64 input) read by a
  // kernel, and a kernel's output read by a host step (Cast to int64).
  GraphBuilder b;
  int n = b.Input("n", graph::TensorType{DType::Int64(), {4}});
  int as_float = b.Add1("Cast", {n}, {{"to", int64_t{1}}});
  int x = b.Input("x", F32({4}));
  int sum = b.Add1("Relu", {b.Add1("Add", {as_float, x})});
  int as_int = b.Add1("Cast", {sum}, {{"to", int64_t{7}}});
  b.Output(sum);
  b.Output(as_int);
  TensorData ints = Ints({3, -5, 7, 0});
  Loaded loaded = ExpectRunsAsOnTheHost(
      b.graph, {ints, Floats({4}, {0.5, 1.5, -9.25, 2.75})});
  ASSERT_NE(loaded.model, nullptr);
  EXPECT_GE(loaded.model->stats().host_steps, 1);
  EXPECT_GE(loaded.model->stats().kernel_steps, 1);
}

TEST_F(GpuModelTest, RefusesInputsOfTheWrongCountDtypeOrShapeNamingThem) {
  Loaded loaded = LoadOnEmulation(SmallCnn());
  ASSERT_NE(loaded.model, nullptr);
  absl::StatusOr<std::vector<TensorData>> outputs = loaded.model->Run({});
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(outputs.status().message().find("missing \"x\""), std::string::npos)
      << outputs.status();
  outputs = loaded.model->Run({Pattern({1, 3, 8, 7}, 1)});
  ASSERT_FALSE(outputs.ok());
  EXPECT_NE(
      outputs.status().message().find("input 0 \"x\": expected "
                                      "f32[1,3,8,8], got float32[1,3,8,7]"),
      std::string::npos)
      << outputs.status();
}

TEST_F(GpuModelTest, InputValuesKnownAtLoadFoldAsConstants) {
  GraphBuilder b;
  int x = b.Input("x", F32({6}));
  int shape = b.Input("shape", graph::TensorType{DType::Int64(), {2}});
  b.Output(b.Add1("Relu", {b.Add1("Reshape", {x, shape})}));
  GpuModelOptions options;
  options.input_values["shape"] = Ints({3, -1});
  Loaded loaded = LoadOnEmulation(b.graph, options);
  ASSERT_NE(loaded.model, nullptr);
  ASSERT_EQ(loaded.model->inputs().size(), 1u);
  absl::StatusOr<std::vector<TensorData>> outputs =
      loaded.model->Run({Floats({6}, {1, -2, 3, -4, 5, -6})});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_EQ((*outputs)[0].shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ((*outputs)[0].values, (std::vector<double>{1, 0, 3, 0, 5, 0}));
}

TEST_F(GpuModelTest, UsesTheDatabasesRecordForTheCudaTarget) {
  // A record of the dense layer's workload for the device's target: the
  // model's kernel is that record's program, and says so.
  GraphBuilder b;
  int x = b.Input("x", F32({4, 32}));
  b.Output(b.Add1("MatMul", {x, b.Const("w", Pattern({32, 16}, 1))}));
  std::shared_ptr<EmulatedModelDevice> device =
      std::make_shared<EmulatedModelDevice>();
  GpuModelOptions options;
  options.device = device;
  absl::StatusOr<std::unique_ptr<GpuModel>> untuned =
      GpuModel::FromGraph(b.graph, options);
  ASSERT_TRUE(untuned.ok()) << untuned.status();
  ASSERT_EQ((*untuned)->origins().size(), 1u);
  const std::string workload = (*untuned)->origins().begin()->first;

  TempFolder dir;
  options.db_path = dir.path() + "/t.db";
  Target target = cuda::ArchTarget("sm_90").value();
  CreateDatabase(options.db_path, {RecordOf(workload, target, 2.5e-5)});
  absl::StatusOr<std::unique_ptr<GpuModel>> tuned =
      GpuModel::FromGraph(b.graph, options);
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  EXPECT_EQ((*tuned)->stats().kernels_tuned, 1);
  const KernelOrigin& origin = (*tuned)->origins().at(workload);
  EXPECT_TRUE(origin.tuned());
  EXPECT_EQ(origin.median_s, 2.5e-5);
  TensorData input = Pattern({4, 32}, 2);
  std::vector<TensorData> expected =
      graph::testing::RunOnHost(b.graph, {input});
  absl::StatusOr<std::vector<TensorData>> outputs = (*tuned)->Run({input});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_TRUE(
      CheckAllClose((*outputs)[0], expected[0], 1e-4, 1e-4, "output").ok());

  // A record for another architecture is not this target's.
  TempFolder other;
  options.db_path = other.path() + "/t.db";
  CreateDatabase(options.db_path,
                 {RecordOf(workload, cuda::ArchTarget("sm_80").value(), 1e-5)});
  absl::StatusOr<std::unique_ptr<GpuModel>> elsewhere =
      GpuModel::FromGraph(b.graph, options);
  ASSERT_TRUE(elsewhere.ok()) << elsewhere.status();
  EXPECT_EQ((*elsewhere)->stats().kernels_tuned, 0);
}

TEST_F(GpuModelTest, RefusesATargetForAnotherArchitectureThanTheDevices) {
  GpuModelOptions options;
  options.device = std::make_shared<EmulatedModelDevice>("sm_90");
  options.target = "cuda -arch=sm_80";
  absl::StatusOr<std::unique_ptr<GpuModel>> model =
      GpuModel::FromGraph(SmallCnn(), options);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(model.status().message().find("builds code for sm_80"),
            std::string::npos)
      << model.status();
  EXPECT_NE(model.status().message().find("is sm_90"), std::string::npos);
  options.target = "host";
  model = GpuModel::FromGraph(SmallCnn(), options);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("host"), std::string::npos)
      << model.status();
}

TEST_F(GpuModelTest, FreesEveryDeviceBufferItAllocated) {
  std::shared_ptr<EmulatedModelDevice> device =
      std::make_shared<EmulatedModelDevice>();
  {
    GpuModelOptions options;
    options.device = device;
    absl::StatusOr<std::unique_ptr<GpuModel>> model =
        GpuModel::FromGraph(SmallCnn(), options);
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_GT(device->live_allocations(), 0);
  }
  EXPECT_EQ(device->live_allocations(), 0);
  EXPECT_EQ(device->bad_frees, 0);
}

TEST_F(GpuModelTest, OutputsThatAreAnInputAConstantOrAViewOfAnInput) {
  GraphBuilder b;
  int x = b.Input("x", F32({2, 3}));
  b.Output(x);
  b.Output(b.Const("c", Floats({2}, {4, -1})));
  b.Output(b.Add1("Reshape", {x, b.Const("shape", Ints({3, 2}))}));
  b.Output(b.Add1("Relu", {x}));
  Loaded loaded = ExpectRunsAsOnTheHost(b.graph, {Pattern({2, 3}, 4)});
  ASSERT_NE(loaded.model, nullptr);
}

TEST_F(GpuModelTest, TensorsOfNoElementsRunAsOnTheHost) {
  // y = relu(x + 1) of x f32[0,3]: no kernel runs, every buffer still has
  // an address; z = relu(w) beside it does run.
  GraphBuilder b;
  int x = b.Input("x", F32({0, 3}));
  int w = b.Input("w", F32({4}));
  b.Output(b.Add1(
      "Relu", {b.Add1("Add", {x, b.Const("one", graph::testing::Scalar(1))})}));
  b.Output(b.Add1("Relu", {w}));
  Loaded loaded = ExpectRunsAsOnTheHost(
      b.graph, {TensorData(DType::Float32(), {0, 3}), Pattern({4}, 1)});
  ASSERT_NE(loaded.model, nullptr);
}

TEST_F(GpuModelTest, DropoutInInferenceKeepsEveryElementAndItsMaskSaysSo) {
  GraphBuilder b;
  int x = b.Input("x", F32({2, 3}));
  std::vector<int> dropped = b.Add("Dropout", {x}, {}, 2);
  b.Output(b.Add1("Relu", {dropped[0]}));
  b.Output(dropped[1]);
  Loaded loaded = ExpectRunsAsOnTheHost(b.graph, {Pattern({2, 3}, 5)});
  ASSERT_NE(loaded.model, nullptr);
}

TEST_F(GpuModelTest, StepTimesOnePerStepWhenAsked) {
  Loaded loaded = LoadOnEmulation(SmallCnn());
  ASSERT_NE(loaded.model, nullptr);
  std::vector<double> step_seconds;
  TensorData x = Pattern({1, 3, 8, 8}, 6);
  absl::StatusOr<std::vector<TensorData>> timed =
      loaded.model->Run({x}, &step_seconds);
  ASSERT_TRUE(timed.ok()) << timed.status();
  ASSERT_EQ(step_seconds.size(), loaded.model->partition().steps.size());
  double total = 0;
  for (double s : step_seconds) {
    EXPECT_GE(s, 0);
    total += s;
  }
  EXPECT_GT(total, 0);
  absl::StatusOr<std::vector<TensorData>> untimed = loaded.model->Run({x});
  ASSERT_TRUE(untimed.ok()) << untimed.status();
  EXPECT_EQ((*timed)[0].values, (*untimed)[0].values);
}

TEST_F(GpuModelTest, RunsFromTwoThreadsTakeTurnsEachWithItsOwnResults) {
  Loaded loaded = LoadOnEmulation(SmallCnn());
  ASSERT_NE(loaded.model, nullptr);
  Graph graph = SmallCnn();
  std::vector<TensorData> inputs = {Pattern({1, 3, 8, 8}, 7),
                                    Pattern({1, 3, 8, 8}, 8)};
  std::vector<std::vector<TensorData>> expected;
  for (const TensorData& input : inputs) {
    expected.push_back(graph::testing::RunOnHost(graph, {input}));
  }
  std::vector<int> mismatches(2, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 5; ++r) {
        absl::StatusOr<std::vector<TensorData>> out =
            loaded.model->Run({inputs[t]});
        if (!out.ok() ||
            !CheckAllClose((*out)[0], expected[t][0], 1e-4, 1e-4, "output")
                 .ok()) {
          ++mismatches[t];
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches, (std::vector<int>{0, 0}));
}

TEST_F(GpuModelTest, AFailingLaunchNamesItsKernelAndNode) {
  Loaded loaded = LoadOnEmulation(SmallCnn());
  ASSERT_NE(loaded.model, nullptr);
  loaded.device->failing_launch = loaded.device->launches + 1;
  absl::StatusOr<std::vector<TensorData>> outputs =
      loaded.model->Run({Pattern({1, 3, 8, 8}, 1)});
  ASSERT_FALSE(outputs.ok());
  const graph::GraphStep* second = nullptr;
  int kernels = 0;
  for (const graph::GraphStep& step : loaded.model->partition().steps) {
    if (step.kind == graph::GraphStep::Kind::kKernel && kernels++ == 1) {
      second = &step;
    }
  }
  ASSERT_NE(second, nullptr);
  EXPECT_NE(outputs.status().message().find(
                absl::StrCat("kernel ", second->workload, " of node \"")),
            std::string::npos)
      << outputs.status();
  EXPECT_NE(outputs.status().message().find("emulated launch failure"),
            std::string::npos);
}

TEST(GpuModel, WithoutADriverTheErrorSaysSo) {
  if (cuda::CheckDriver().ok()) {
    GTEST_SKIP() << "this machine has a CUDA driver";
  }
  absl::StatusOr<std::unique_ptr<GpuModel>> model =
      GpuModel::FromGraph(SmallCnn());
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(model.status().message().find("no CUDA driver"), std::string::npos)
      << model.status();
}

}  // namespace
}  // namespace lathe::api
