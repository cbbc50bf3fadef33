#include "compiler/graph/kernel_partition.h"

#include "compiler/graph/pipeline.h"
#include "compiler/workload/reference.h"
#include "compiler/workload/spec.h"
#include "gtest/gtest.h"
#include "tests/compiler/graph/graph_builder.h"

namespace lathe::graph {
namespace {

using testing::F32;
using testing::Floats;
using testing::GraphBuilder;
using testing::Scalar;
using Ints64 = std::vector<int64_t>;

KernelPartition Partition(GraphBuilder& b) {
  absl::Status passes = RunGraphPasses(b.graph);
  EXPECT_TRUE(passes.ok()) << passes;
  absl::StatusOr<KernelPartition> partition = PartitionGraph(b.graph);
  EXPECT_TRUE(partition.ok()) << partition.status();
  return partition.ok() ? *partition : KernelPartition{};
}

std::vector<std::string> Ops(const Graph& graph, const GraphStep& step) {
  std::vector<std::string> ops;
  for (int n : step.nodes) ops.push_back(graph.nodes()[n].op);
  return ops;
}

int ValueNamed(const Graph& graph, const std::string& name) {
  for (size_t v = 0; v < graph.values().size(); ++v) {
    if (graph.values()[v].name == name) return static_cast<int>(v);
  }
  return kNoValue;
}

TEST(KernelPartition, ConvBiasResidualReluIsOneKernel) {
  GraphBuilder b;
  int x = b.Input("x", F32({1, 4, 6, 6}));
  int residual = b.Input("residual", F32({1, 4, 6, 6}));
  int w = b.Const("w", TensorData(DType::Float32(), {4, 4, 3, 3}));
  int bias = b.Const("bias", TensorData(DType::Float32(), {4}));
  int conv = b.Add1("Conv", {x, w, bias}, {{"pads", Ints64{1, 1, 1, 1}}});
  int add = b.Add1("Add", {conv, residual});
  b.Output(b.Add1("Relu", {add}));
  KernelPartition p = Partition(b);
  ASSERT_EQ(p.steps.size(), 1u);
  const GraphStep& step = p.steps[0];
  EXPECT_EQ(step.kind, GraphStep::Kind::kKernel);
  EXPECT_EQ(step.anchor, "Conv");
  EXPECT_EQ(Ops(b.graph, step),
            (std::vector<std::string>{"Conv", "Add", "Relu"}));
  const Graph& g = b.graph;
  EXPECT_EQ(step.args,
            (std::vector<int>{ValueNamed(g, "x"), ValueNamed(g, "w"),
                              ValueNamed(g, "bias"), ValueNamed(g, "residual"),
                              g.outputs()[0]}));
  // 2*N*K*P*Q*C*R*S for the conv, one op each for bias, add and relu.
  EXPECT_EQ(step.flops, 2.0 * 4 * 36 * 4 * 9 + 3 * 4 * 36);
  absl::StatusOr<Workload> w2 = ParseWorkloadSpec(step.workload);
  ASSERT_TRUE(w2.ok()) << w2.status();
  EXPECT_EQ(w2->CanonicalForm(), step.workload);
  EXPECT_EQ(
      step.workload.rfind("custom:input in0[1,4,6,6]; input in1[4,4,3,3] "
                          "const; input in2[4] const; input in3[1,4,6,6];",
                          0),
      0u)
      << step.workload;
}

// A graph constant (initializer) is declared `const` in the kernel's text:
// the task of a conv whose weight is a constant is not the task of the same
// conv whose weight arrives at run time.
TEST(KernelPartition, GraphConstantsAreDeclaredConst) {
  auto conv_task = [](bool weight_is_constant) {
    GraphBuilder b;
    int x = b.Input("x", F32({1, 4, 6, 6}));
    int w = weight_is_constant
                ? b.Const("w", TensorData(DType::Float32(), {4, 4, 3, 3}))
                : b.Input("w", F32({4, 4, 3, 3}));
    b.Output(b.Add1("Conv", {x, w}, {{"pads", Ints64{1, 1, 1, 1}}}));
    KernelPartition p = Partition(b);
    EXPECT_EQ(p.steps.size(), 1u);
    return p.steps.empty() ? std::string() : p.steps[0].workload;
  };
  const std::string constant = conv_task(true);
  const std::string runtime = conv_task(false);
  EXPECT_EQ(constant.rfind("custom:input in0[1,4,6,6]; "
                           "input in1[4,4,3,3] const; ",
                           0),
            0u)
      << constant;
  EXPECT_EQ(runtime.rfind("custom:input in0[1,4,6,6]; input in1[4,4,3,3]; ", 0),
            0u)
      << runtime;
  absl::StatusOr<Workload> a = ParseWorkloadSpec(constant);
  absl::StatusOr<Workload> r = ParseWorkloadSpec(runtime);
  ASSERT_TRUE(a.ok() && r.ok());
  EXPECT_NE(a->Key(), r->Key());
  EXPECT_FALSE(a->IsLayoutFreeInput(0));
  EXPECT_TRUE(a->IsLayoutFreeInput(1));
  EXPECT_FALSE(r->IsLayoutFreeInput(1));
}

TEST(KernelPartition, BatchNormFoldedConvReluIsOneKernel) {
  GraphBuilder b;
  int x = b.Input("x", F32({1, 2, 4, 4}));
  int conv = b.Add1(
      "Conv", {x, b.Const("w", TensorData(DType::Float32(), {3, 2, 1, 1}))});
  TensorData ones(DType::Float32(), {3});
  ones.values = {1, 1, 1};
  int bn = b.Add1("BatchNormalization",
                  {conv, b.Const("s", ones), b.Const("b", ones),
                   b.Const("m", ones), b.Const("v", ones)});
  b.Output(b.Add1("Relu", {bn}));
  KernelPartition p = Partition(b);
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(Ops(b.graph, p.steps[0]),
            (std::vector<std::string>{"Conv", "Relu"}));
}

TEST(KernelPartition, GeluPatternChainsIntoOneKernel) {
  GraphBuilder b;
  int x = b.Input("x", F32({2, 8}));
  int w = b.Input("w", F32({8, 8}));
  int mm = b.Add1("MatMul", {x, w});
  int bias = b.Add1("Add", {mm, b.Input("bias", F32({8}))});
  int div = b.Add1("Div", {bias, b.Const("sqrt2", Scalar(1.4142135623730951))});
  int erf = b.Add1("Erf", {div});
  int plus = b.Add1("Add", {erf, b.Const("one", Scalar(1))});
  int mul = b.Add1("Mul", {bias, plus});
  b.Output(b.Add1("Mul", {mul, b.Const("half", Scalar(0.5))}));
  KernelPartition p = Partition(b);
  ASSERT_EQ(p.steps.size(), 2u);
  // The matmul keeps its bias; the biased value has two readers, so the
  // GELU is a chain of its own with the literals inlined.
  EXPECT_EQ(Ops(b.graph, p.steps[0]),
            (std::vector<std::string>{"MatMul", "Add"}));
  EXPECT_EQ(p.steps[1].anchor, "");
  EXPECT_EQ(Ops(b.graph, p.steps[1]),
            (std::vector<std::string>{"Div", "Erf", "Add", "Mul", "Mul"}));
  EXPECT_EQ(p.steps[1].args.size(), 2u);  // the biased value and the output
  EXPECT_NE(p.steps[1].workload.find("erf("), std::string::npos);
}

TEST(KernelPartition, ViewsAliasAndNonFloatWorkIsOnTheHost) {
  GraphBuilder b;
  int x = b.Input("x", F32({2, 3}));
  int flat = b.Add1("Flatten", {x}, {{"axis", int64_t{0}}});
  int relu = b.Add1("Relu", {flat});
  int mask = b.Add1("Greater", {relu, b.Const("zero", Scalar(0))});
  int where = b.Add1("Where", {mask, relu, b.Const("m1", Scalar(-1))});
  std::vector<int> parts = b.Add("Split", {where}, {{"axis", int64_t{1}}}, 2);
  b.Output(parts[0]);
  b.Output(parts[1]);
  KernelPartition p = Partition(b);
  ASSERT_EQ(p.steps.size(), 5u);
  EXPECT_EQ(p.steps[0].kind, GraphStep::Kind::kAlias);
  EXPECT_EQ(p.steps[1].kind, GraphStep::Kind::kKernel);
  EXPECT_EQ(p.steps[2].kind, GraphStep::Kind::kHost);  // Greater: bool
  EXPECT_EQ(p.steps[3].kind, GraphStep::Kind::kHost);  // Where: bool input
  EXPECT_EQ(p.steps[4].kind, GraphStep::Kind::kHost);  // Split: two outputs
}

TEST(KernelPartition, AnIntermediateWithTwoReadersEndsTheGroup) {
  GraphBuilder b;
  int x = b.Input("x", F32({4}));
  int e = b.Add1("Exp", {x});
  int n = b.Add1("Neg", {e});
  b.Output(b.Add1("Add", {e, n}));
  KernelPartition p = Partition(b);
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(Ops(b.graph, p.steps[0]), (std::vector<std::string>{"Exp"}));
  EXPECT_EQ(Ops(b.graph, p.steps[1]), (std::vector<std::string>{"Neg", "Add"}));
}

TEST(KernelPartition, AGraphOutputIsNotAbsorbed) {
  GraphBuilder b;
  int x = b.Input("x", F32({4}));
  int e = b.Add1("Exp", {x});
  b.Output(e);
  b.Output(b.Add1("Neg", {e}));
  KernelPartition p = Partition(b);
  EXPECT_EQ(p.steps.size(), 2u);
}

TEST(KernelPartition, DoesNotAbsorbANodeReadingALaterStep) {
  // The Add reads the second Conv, which comes after the first in order and
  // is unassigned when the first group forms: the Add joins the second.
  GraphBuilder b;
  int x = b.Input("x", F32({1, 2, 4, 4}));
  int w = b.Const("w", TensorData(DType::Float32(), {2, 2, 1, 1}));
  int c1 = b.Add1("Conv", {x, w});
  int c2 = b.Add1("Conv", {x, w}, {{"group", int64_t{1}}});
  b.Output(b.Add1("Add", {c1, c2}));
  KernelPartition p = Partition(b);
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(Ops(b.graph, p.steps[0]), (std::vector<std::string>{"Conv"}));
  EXPECT_EQ(Ops(b.graph, p.steps[1]),
            (std::vector<std::string>{"Conv", "Add"}));
}

TEST(KernelPartition, GroupedConvEndsItsKernel) {
  GraphBuilder b;
  int x = b.Input("x", F32({1, 4, 4, 4}));
  int conv = b.Add1(
      "Conv", {x, b.Const("w", TensorData(DType::Float32(), {4, 2, 1, 1}))},
      {{"group", int64_t{2}}});
  b.Output(b.Add1("Relu", {conv}));
  KernelPartition p = Partition(b);
  EXPECT_EQ(p.steps.size(), 2u);
}

TEST(KernelPartition, SoftmaxIsAKernelThatAbsorbsAScale) {
  GraphBuilder b;
  int x = b.Input("x", F32({2, 5}));
  int s = b.Add1("Softmax", {x});
  b.Output(b.Add1("Mul", {s, b.Const("k", Scalar(3))}));
  KernelPartition p = Partition(b);
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].anchor, "Softmax");
}

TEST(KernelPartition, EmittedTextIsDeterministic) {
  auto build = [] {
    GraphBuilder b;
    int x = b.Input("input", F32({3, 4}));
    b.Output(b.Add1("Relu", {b.Add1("Exp", {x})}));
    return b;
  };
  GraphBuilder a = build(), c = build();
  EXPECT_EQ(Partition(a).steps[0].workload, Partition(c).steps[0].workload);
  EXPECT_EQ(Partition(a).steps[0].workload,
            "custom:input in0[12]; t0[v0] = exp(in0[v0]); "
            "out[v2] = max(t0[v2], 0.0)|v0=12,v2=12");
}

// A 1x1 stride-1 convolution's group is tuned over one spatial index
// (compiler/workload/flatten_dims.h); its arguments stay the graph values.
TEST(KernelPartition, PointwiseConvolutionIsFlattened) {
  GraphBuilder b;
  int x = b.Input("x", F32({1, 8, 6, 5}));
  int w = b.Const("w", TensorData(DType::Float32(), {4, 8, 1, 1}));
  int conv = b.Add1("Conv", {x, w});
  b.Output(b.Add1("Relu", {conv}));
  KernelPartition partition = Partition(b);
  ASSERT_EQ(partition.steps.size(), 1u);
  EXPECT_EQ(partition.steps[0].workload,
            "custom:input in0[1,8,30]; input in1[4,8,1,1] const; "
            "t0[v0,v1,v2] += in0[v0,v4,v2] * in1[v1,v4,0,0]; "
            "out[v7,v8,v9] = max(t0[v7,v8,v9], 0.0)"
            "|v0=1,v1=4,v2=30,v4=8,v7=1,v8=4,v9=30");
  EXPECT_EQ(partition.steps[0].args.size(), 3u);
  EXPECT_EQ(partition.steps[0].args[0], x);
  EXPECT_EQ(partition.steps[0].args[1], w);
}

// Attention's operands: the scaled queries and the transposed keys are the
// product's prologue, one kernel with it, which computes q/8 . k^T.
TEST(KernelPartition, TransposesReadOnlyByAProductAreItsPrologue) {
  GraphBuilder b;
  int q = b.Input("q", F32({3, 2, 4}));
  int k = b.Input("k", F32({5, 2, 4}));
  int qt = b.Add1("Transpose", {q}, {{"perm", Ints64{1, 0, 2}}});
  int scaled = b.Add1("Div", {qt, b.Const("eight", Scalar(8))});
  int kt = b.Add1("Transpose", {k}, {{"perm", Ints64{1, 2, 0}}});
  b.Output(b.Add1("MatMul", {scaled, kt}));
  KernelPartition p = Partition(b);
  ASSERT_EQ(p.steps.size(), 1u);
  const GraphStep& step = p.steps[0];
  EXPECT_EQ(step.anchor, "MatMul");
  EXPECT_EQ(
      Ops(b.graph, step),
      (std::vector<std::string>{"Transpose", "Div", "Transpose", "MatMul"}));
  EXPECT_EQ(step.args, (std::vector<int>{q, k, b.graph.outputs()[0]}));

  // The kernel computes it: out[h, i, j] = sum_d q[i, h, d] / 8 * k[j, h, d].
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(step.workload);
  ASSERT_TRUE(workload.ok()) << workload.status();
  TensorData qd(DType::Float32(), {3, 2, 4});
  TensorData kd(DType::Float32(), {5, 2, 4});
  for (size_t i = 0; i < qd.values.size(); ++i) qd.values[i] = 0.5 * i - 3;
  for (size_t i = 0; i < kd.values.size(); ++i) kd.values[i] = 1.0 - 0.25 * i;
  std::vector<TensorData> args = {qd, kd};
  for (size_t a = 0; a < args.size(); ++a)
    args[a].shape = workload->inputs()[a].shape();
  absl::StatusOr<std::vector<TensorData>> got = RunReference(*workload, args);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ((*got)[0].values.size(), 2u * 3u * 5u);
  for (int h = 0; h < 2; ++h) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 5; ++j) {
        double want = 0;
        for (int d = 0; d < 4; ++d) {
          want += qd.values[(i * 2 + h) * 4 + d] / 8 *
                  kd.values[(j * 2 + h) * 4 + d];
        }
        EXPECT_NEAR((*got)[0].values[(h * 3 + i) * 5 + j], want, 1e-9)
            << h << "," << i << "," << j;
      }
    }
  }
}

TEST(KernelPartition, ATransposeReadByOtherWorkIsAKernelOfItsOwn) {
  GraphBuilder b;
  int x = b.Input("x", F32({3, 4}));
  int y = b.Input("y", F32({5, 4}));
  // Chained into a graph output: a kernel with what follows, as before.
  b.Output(
      b.Add1("Relu", {b.Add1("Transpose", {x}, {{"perm", Ints64{1, 0}}})}));
  // Read by a product and by a second node: a kernel of its own.
  int t = b.Add1("Transpose", {y}, {{"perm", Ints64{1, 0}}});
  b.Output(b.Add1("MatMul", {x, t}));
  b.Output(b.Add1("Neg", {t}));
  KernelPartition p = Partition(b);
  ASSERT_EQ(p.steps.size(), 4u);
  EXPECT_EQ(Ops(b.graph, p.steps[0]),
            (std::vector<std::string>{"Transpose", "Relu"}));
  EXPECT_EQ(Ops(b.graph, p.steps[1]), (std::vector<std::string>{"Transpose"}));
  EXPECT_EQ(Ops(b.graph, p.steps[2]), (std::vector<std::string>{"MatMul"}));
}

}  // namespace
}  // namespace lathe::graph
