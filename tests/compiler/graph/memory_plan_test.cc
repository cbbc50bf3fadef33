#include "compiler/graph/memory_plan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lathe::graph {
namespace {

TensorType F32(std::vector<int64_t> shape) {
  return TensorType{DType::Float32(), std::move(shape)};
}

// A kernel step over one node reading `inputs` and writing `output`.
GraphStep Kernel(Graph& graph, const std::vector<int>& inputs, int output) {
  Node node;
  node.op = "Relu";
  node.name = "k" + std::to_string(graph.nodes().size());
  node.inputs = inputs;
  node.outputs = {output};
  GraphStep step;
  step.kind = GraphStep::Kind::kKernel;
  step.nodes = {graph.AddNode(node)};
  step.args = inputs;
  step.args.push_back(output);
  return step;
}

GraphStep Alias(Graph& graph, int input, int output) {
  Node node;
  node.op = "Identity";
  node.name = "alias" + std::to_string(graph.nodes().size());
  node.inputs = {input};
  node.outputs = {output};
  GraphStep step;
  step.kind = GraphStep::Kind::kAlias;
  step.nodes = {graph.AddNode(node)};
  return step;
}

TEST(MemoryPlan, ReusesTheBytesOfTensorsThatAreDead) {
  // in -> a -> b -> c -> out: a dies when c is born, so c takes a's bytes.
  Graph graph;
  int in = graph.AddValue("in", F32({256}));
  int a = graph.AddValue("a", F32({256}));
  int b = graph.AddValue("b", F32({256}));
  int c = graph.AddValue("c", F32({256}));
  int out = graph.AddValue("out", F32({256}));
  graph.AddInput(in);
  KernelPartition partition;
  partition.steps.push_back(Kernel(graph, {in}, a));
  partition.steps.push_back(Kernel(graph, {a}, b));
  partition.steps.push_back(Kernel(graph, {b}, c));
  partition.steps.push_back(Kernel(graph, {c}, out));
  graph.AddOutput(out);

  absl::StatusOr<MemoryPlan> plan = PlanMemory(graph, partition);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->peak_bytes, 2 * 1024);
  EXPECT_EQ(plan->unshared_bytes, 3 * 1024);
  EXPECT_EQ(plan->offsets[a], plan->offsets[c]);
  EXPECT_NE(plan->offsets[a], plan->offsets[b]);
  EXPECT_EQ(plan->offsets[in], kNotPlanned);
  EXPECT_EQ(plan->offsets[out], kNotPlanned);
}

TEST(MemoryPlan, AStepsOutputNeverSharesWithItsInputs) {
  Graph graph;
  int in = graph.AddValue("in", F32({16}));
  int a = graph.AddValue("a", F32({16}));
  int b = graph.AddValue("b", F32({16}));
  int out = graph.AddValue("out", F32({16}));
  graph.AddInput(in);
  KernelPartition partition;
  partition.steps.push_back(Kernel(graph, {in}, a));
  partition.steps.push_back(Kernel(graph, {a}, b));
  partition.steps.push_back(Kernel(graph, {b}, out));
  graph.AddOutput(out);
  absl::StatusOr<MemoryPlan> plan = PlanMemory(graph, partition);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_NE(plan->offsets[a], plan->offsets[b]);
  EXPECT_EQ(plan->peak_bytes, 2 * 64);
}

TEST(MemoryPlan, AliasSharesStorageAndExtendsItsLifetime) {
  // a is viewed as a2, which is read at the last step: a must stay alive
  // while b is computed, so b gets other bytes.
  Graph graph;
  int in = graph.AddValue("in", F32({4, 64}));
  int a = graph.AddValue("a", F32({4, 64}));
  int a2 = graph.AddValue("a2", F32({256}));
  int b = graph.AddValue("b", F32({256}));
  int c = graph.AddValue("c", F32({256}));
  int out = graph.AddValue("out", F32({256}));
  graph.AddInput(in);
  KernelPartition partition;
  partition.steps.push_back(Kernel(graph, {in}, a));
  partition.steps.push_back(Alias(graph, a, a2));
  partition.steps.push_back(Kernel(graph, {in}, b));
  partition.steps.push_back(Kernel(graph, {b}, c));
  partition.steps.push_back(Kernel(graph, {a2, c}, out));
  graph.AddOutput(out);
  absl::StatusOr<MemoryPlan> plan = PlanMemory(graph, partition);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->storage_of[a2], a);
  EXPECT_EQ(plan->offsets[a2], plan->offsets[a]);
  EXPECT_NE(plan->offsets[a], plan->offsets[b]);
  EXPECT_NE(plan->offsets[a], plan->offsets[c]);
  EXPECT_NE(plan->offsets[b], plan->offsets[c]);
  EXPECT_EQ(plan->peak_bytes, 3 * 1024);
}

TEST(MemoryPlan, StorageReachingAGraphOutputOrInputIsNotPlanned) {
  Graph graph;
  int in = graph.AddValue("in", F32({8}));
  int in_view = graph.AddValue("in_view", F32({2, 4}));
  int a = graph.AddValue("a", F32({8}));
  int a_view = graph.AddValue("a_view", F32({2, 4}));
  graph.AddInput(in);
  KernelPartition partition;
  partition.steps.push_back(Alias(graph, in, in_view));
  partition.steps.push_back(Kernel(graph, {in_view}, a));
  partition.steps.push_back(Alias(graph, a, a_view));
  graph.AddOutput(a_view);
  absl::StatusOr<MemoryPlan> plan = PlanMemory(graph, partition);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->storage_of[in_view], in);
  EXPECT_EQ(plan->offsets[in_view], kNotPlanned);
  EXPECT_EQ(plan->offsets[a], kNotPlanned);
  EXPECT_EQ(plan->offsets[a_view], kNotPlanned);
  EXPECT_EQ(plan->peak_bytes, 0);
}

TEST(MemoryPlan, OffsetsAreAlignedAndOtherDtypesStayOnTheHost) {
  Graph graph;
  int in = graph.AddValue("in", F32({3}));
  int a = graph.AddValue("a", F32({3}));
  int b = graph.AddValue("b", F32({5}));
  int shape = graph.AddValue("shape", TensorType{DType::Int64(), {1000}});
  int out = graph.AddValue("out", F32({5}));
  graph.AddInput(in);
  KernelPartition partition;
  partition.steps.push_back(Kernel(graph, {in}, a));
  partition.steps.push_back(Kernel(graph, {in}, b));
  Node host;
  host.op = "Shape";
  host.name = "host";
  host.inputs = {a};
  host.outputs = {shape};
  GraphStep host_step;
  host_step.kind = GraphStep::Kind::kHost;
  host_step.nodes = {graph.AddNode(host)};
  partition.steps.push_back(host_step);
  partition.steps.push_back(Kernel(graph, {a, b}, out));
  graph.AddOutput(out);
  absl::StatusOr<MemoryPlan> plan = PlanMemory(graph, partition);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->offsets[shape], kNotPlanned);
  EXPECT_EQ(plan->offsets[a] % kArenaAlignment, 0);
  EXPECT_EQ(plan->offsets[b] % kArenaAlignment, 0);
  EXPECT_NE(plan->offsets[a], plan->offsets[b]);
  EXPECT_EQ(plan->peak_bytes, 128);
}

TEST(MemoryPlan, RefusesAReadOfAValueNothingProvides) {
  Graph graph;
  int in = graph.AddValue("in", F32({3}));
  int ghost = graph.AddValue("ghost", F32({3}));
  int out = graph.AddValue("out", F32({3}));
  graph.AddInput(in);
  KernelPartition partition;
  partition.steps.push_back(Kernel(graph, {ghost}, out));
  graph.AddOutput(out);
  absl::StatusOr<MemoryPlan> plan = PlanMemory(graph, partition);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("\"ghost\""), std::string::npos)
      << plan.status();
}

}  // namespace
}  // namespace lathe::graph
