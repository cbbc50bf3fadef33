#include "tools/model_check.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/gpu_model.h"
#include "compiler/graph/evaluate_graph.h"
#include "compiler/interp/allclose.h"
#include "compiler/interp/random_fill.h"

namespace lathe::tools {
namespace {

using graph::Attr;
using graph::Graph;
using graph::TensorType;

// Graphs by hand: untyped intermediate values, typed by the passes.
class Builder {
 public:
  int Input(const std::string& name, TensorType type) {
    int id = graph.AddValue(name, std::move(type));
    graph.AddInput(id);
    return id;
  }
  int Const(const std::string& name, std::vector<int64_t> shape, uint64_t seed,
            double scale) {
    TensorData data(DType::Float32(), std::move(shape));
    FillRandom(&data, seed);
    for (double& v : data.values) v *= scale;
    return graph.AddConstant(name, std::move(data));
  }
  int Add(const std::string& op, std::vector<int> inputs,
          std::map<std::string, Attr> attrs = {}) {
    graph::Node node;
    node.op = op;
    node.name = absl::StrCat(op, "_", graph.nodes().size());
    node.attrs = std::move(attrs);
    node.inputs = std::move(inputs);
    int out = graph.AddValue(absl::StrCat(node.name, "_out"), TensorType{});
    graph.value(out).typed = false;
    node.outputs = {out};
    graph.AddNode(std::move(node));
    return out;
  }
  Graph graph;
};

TensorType F32(std::vector<int64_t> shape) {
  return TensorType{DType::Float32(), std::move(shape)};
}

const std::map<std::string, Attr> kPad1 = {
    {"pads", std::vector<int64_t>{1, 1, 1, 1}}};

Graph SmallCnn() {
  Builder b;
  int x = b.Input("x", F32({1, 3, 32, 32}));
  int conv = b.Add(
      "Conv",
      {x, b.Const("w", {16, 3, 3, 3}, 11, 0.3), b.Const("b", {16}, 12, 0.1)},
      kPad1);
  int pool = b.Add("MaxPool", {b.Add("Relu", {conv})},
                   {{"kernel_shape", std::vector<int64_t>{2, 2}},
                    {"strides", std::vector<int64_t>{2, 2}}});
  int flat = b.Add("Flatten", {pool}, {{"axis", int64_t{1}}});
  int dense = b.Add("Gemm",
                    {flat, b.Const("dense_w", {10, 16 * 16 * 16}, 13, 0.02),
                     b.Const("dense_b", {10}, 14, 0.1)},
                    {{"transB", int64_t{1}}});
  b.graph.AddOutput(b.Add("Softmax", {dense}, {{"axis", int64_t{1}}}));
  return b.graph;
}

// conv-relu-conv, plus the block's input, relu; global average pool and a
// dense layer: ResNet-18's first stage block at its extents.
Graph ResNetBlock() {
  Builder b;
  int x = b.Input("x", F32({1, 64, 56, 56}));
  int conv1 = b.Add("Conv",
                    {x, b.Const("w1", {64, 64, 3, 3}, 21, 0.05),
                     b.Const("b1", {64}, 22, 0.1)},
                    kPad1);
  int conv2 =
      b.Add("Conv",
            {b.Add("Relu", {conv1}), b.Const("w2", {64, 64, 3, 3}, 23, 0.05),
             b.Const("b2", {64}, 24, 0.1)},
            kPad1);
  int block = b.Add("Relu", {b.Add("Add", {conv2, x})});
  int pooled = b.Add("Flatten", {b.Add("GlobalAveragePool", {block})},
                     {{"axis", int64_t{1}}});
  b.graph.AddOutput(block);
  b.graph.AddOutput(b.Add("Gemm",
                          {pooled, b.Const("fc_w", {10, 64}, 25, 0.1),
                           b.Const("fc_b", {10}, 26, 0.1)},
                          {{"transB", int64_t{1}}}));
  return b.graph;
}

// An int64 input cast on the host, added to a float input by a kernel,
// cast back to int64 on the host.
Graph HostSteps() {
  Builder b;
  int n = b.Input("n", TensorType{DType::Int64(), {1000}});
  int x = b.Input("x", F32({1000}));
  int sum = b.Add(
      "Relu", {b.Add("Add", {b.Add("Cast", {n}, {{"to", int64_t{1}}}), x})});
  b.graph.AddOutput(sum);
  b.graph.AddOutput(b.Add("Cast", {sum}, {{"to", int64_t{7}}}));
  return b.graph;
}

bool CheckModel(const std::string& name, const Graph& graph,
                const Target& target,
                const std::shared_ptr<api::ModelDevice>& device,
                int timed_runs) {
  auto fail = [&](const std::string& why) {
    std::printf("FAIL model %s: %s\n", name.c_str(), why.c_str());
    std::fflush(stdout);
    return false;
  };
  std::vector<TensorData> inputs;
  uint64_t seed = 1;
  for (int v : graph.inputs()) {
    TensorData data(graph.value(v).type.dtype, graph.value(v).type.shape);
    FillRandom(&data, seed++);
    if (data.dtype != DType::Float32()) {
      for (double& e : data.values) e = static_cast<int64_t>(e * 50);
    }
    inputs.push_back(std::move(data));
  }
  absl::StatusOr<std::vector<TensorData>> expected =
      graph::EvaluateGraph(graph, inputs);
  if (!expected.ok()) {
    return fail(absl::StrCat("host evaluation: ", expected.status().message()));
  }
  api::GpuModelOptions options;
  options.target = target.ToString();
  options.device = device;
  const auto load_start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<api::GpuModel>> model =
      api::GpuModel::FromGraph(graph, options);
  if (!model.ok()) return fail(std::string(model.status().message()));
  const double load_s = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - load_start)
                            .count();
  absl::StatusOr<std::vector<TensorData>> outputs = (*model)->Run(inputs);
  if (!outputs.ok()) return fail(std::string(outputs.status().message()));
  if (outputs->size() != expected->size()) {
    return fail(absl::StrCat(outputs->size(), " outputs, the host gives ",
                             expected->size()));
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    absl::Status close = CheckAllClose((*outputs)[i], (*expected)[i], 1e-3,
                                       1e-3, absl::StrCat("output ", i));
    if (!close.ok()) return fail(std::string(close.message()));
  }
  // The run's time, copies in and out included.
  constexpr int kWarmupRuns = 3;
  std::vector<double> times;
  for (int r = 0; r < kWarmupRuns + std::max(timed_runs, 1); ++r) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::vector<TensorData>> again = (*model)->Run(inputs);
    if (!again.ok()) return fail(std::string(again.status().message()));
    if (r >= kWarmupRuns) {
      times.push_back(std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count());
    }
  }
  std::sort(times.begin(), times.end());
  const api::ModelStats& stats = (*model)->stats();
  std::printf(
      "PASS model %s: %d kernel calls (%d distinct), %d host steps, "
      "outputs match the host's; load %.2f s, run %.3f ms (median of %zu, "
      "copies included)\n",
      name.c_str(), stats.kernel_steps, stats.distinct_kernels,
      stats.host_steps, load_s, times[times.size() / 2] * 1e3, times.size());
  std::fflush(stdout);
  return true;
}

}  // namespace

bool CheckModels(const Target& target, std::shared_ptr<api::ModelDevice> device,
                 int timed_runs) {
  bool ok = true;
  ok &= CheckModel("small_cnn", SmallCnn(), target, device, timed_runs);
  ok &= CheckModel("resnet_block_56x56x64", ResNetBlock(), target, device,
                   timed_runs);
  ok &= CheckModel("host_steps", HostSteps(), target, device, timed_runs);
  return ok;
}

}  // namespace lathe::tools
