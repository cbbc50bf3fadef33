// The key check of every operator's emitter: for each float32 operator (and
// its attribute variants), a one-node graph is partitioned into its kernel,
// the kernel's custom workload is compiled by the JIT with the default
// schedule and run, and its output is compared with the operator's host
// evaluation (EvaluateNode) on the same inputs. The workload's own
// reference evaluation is compared too, so a mismatch says whether the
// emitted text or the code generation is at fault.
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/kernel_program.h"
#include "compiler/codegen/llvm/jit.h"
#include "compiler/graph/kernel_partition.h"
#include "compiler/graph/op_registry.h"
#include "compiler/graph/passes/average_pool_counts.h"
#include "compiler/graph/passes/infer_types.h"
#include "compiler/graph/passes/winograd_conv.h"
#include "compiler/interp/allclose.h"
#include "compiler/interp/random_fill.h"
#include "compiler/workload/reference.h"
#include "compiler/workload/spec.h"
#include "gtest/gtest.h"
#include "tests/compiler/graph/graph_builder.h"

namespace lathe::graph {
namespace {

using testing::F32;
using testing::Floats;
using testing::GraphBuilder;
using testing::Ints;
using testing::Scalar;

// An input of the node: a random float32 tensor (positive where the op
// needs it), a given constant, or absent.
struct Operand {
  std::vector<int64_t> shape;
  bool positive = false;
  std::optional<TensorData> constant;
  bool absent = false;
};
Operand In(std::vector<int64_t> shape) {
  return {std::move(shape), false, std::nullopt, false};
}
Operand Pos(std::vector<int64_t> shape) {
  return {std::move(shape), true, std::nullopt, false};
}
Operand Const(TensorData data) { return {{}, false, std::move(data), false}; }
Operand Absent() { return {{}, false, std::nullopt, true}; }

struct KernelCase {
  std::string label;
  std::string op;
  std::vector<Operand> inputs;
  std::map<std::string, Attr> attrs;
};

using Ints64 = std::vector<int64_t>;

// A [4,4,4,4] input-transform table B[p,q,i,j] that is zero unless i is p or
// 2 - p/2 and j is q or 2 - q/2, as F(2x2, 3x3)'s is, with other values on
// those entries.
TensorData OtherValuesOnThePairs() {
  auto in_pair = [](int p, int i) { return i == p || i == 2 - p / 2; };
  std::vector<double> values;
  for (int p = 0; p < 4; ++p) {
    for (int q = 0; q < 4; ++q) {
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) {
          values.push_back(in_pair(p, i) && in_pair(q, j)
                               ? 0.25 * (p + 1) - 0.5 * (i + 1) * (j - q)
                               : 0.0);
        }
      }
    }
  }
  return Floats({4, 4, 4, 4}, values);
}

std::vector<KernelCase> Cases() {
  std::vector<KernelCase> cases;
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Erf", "Abs", "Neg",
                         "HardSwish", "Softplus"}) {
    cases.push_back({op, op, {In({2, 3, 5})}, {}});
  }
  for (const char* op : {"Log", "Sqrt", "Reciprocal"}) {
    cases.push_back({op, op, {Pos({4, 7})}, {}});
  }
  cases.push_back({"LeakyRelu", "LeakyRelu", {In({3, 8})}, {{"alpha", 0.1}}});
  cases.push_back({"Softsign", "Softsign", {In({3, 8})}, {}});
  cases.push_back(
      {"ThresholdedRelu", "ThresholdedRelu", {In({3, 8})}, {{"alpha", 0.2}}});
  cases.push_back({"Selu", "Selu", {In({3, 8})}, {}});
  cases.push_back({"Celu", "Celu", {In({3, 8})}, {{"alpha", 0.5}}});
  cases.push_back(
      {"Shrink", "Shrink", {In({3, 8})}, {{"lambd", 0.25}, {"bias", 0.125}}});
  cases.push_back({"PRelu", "PRelu", {In({2, 3, 4}), In({3, 1})}, {}});
  cases.push_back({"HardSigmoid",
                   "HardSigmoid",
                   {In({3, 8})},
                   {{"alpha", 0.3}, {"beta", 0.4}}});
  cases.push_back({"Elu", "Elu", {In({3, 8})}, {{"alpha", 0.7}}});
  for (const char* op : {"Add", "Sub", "Mul"}) {
    cases.push_back(
        {std::string(op) + " broadcast", op, {In({2, 3, 4}), In({3, 1})}, {}});
  }
  cases.push_back(
      {"Add scalar constant", "Add", {In({5, 2}), Const(Scalar(0.25))}, {}});
  cases.push_back({"Div", "Div", {In({2, 6}), Pos({6})}, {}});
  cases.push_back({"Pow tensor", "Pow", {Pos({4, 5}), In({4, 5})}, {}});
  cases.push_back(
      {"Pow constant 2", "Pow", {In({4, 5}), Const(Scalar(2.0))}, {}});
  for (const char* op : {"Max", "Min", "Sum", "Mean"}) {
    cases.push_back({std::string(op) + " of three",
                     op,
                     {In({2, 4}), In({4}), In({2, 1})},
                     {}});
  }
  cases.push_back({"Clip",
                   "Clip",
                   {In({3, 6}), Const(Scalar(-0.5)), Const(Scalar(0.25))},
                   {}});
  cases.push_back(
      {"Clip min only", "Clip", {In({3, 6}), Const(Scalar(0.0))}, {}});
  cases.push_back(
      {"Clip tensor bounds", "Clip", {In({3, 6}), In({}), Absent()}, {}});
  cases.push_back({"BatchNormalization",
                   "BatchNormalization",
                   {In({2, 3, 4, 5}), In({3}), In({3}), In({3}), Pos({3})},
                   {{"epsilon", 1e-3}}});
  cases.push_back(
      {"Expand", "Expand", {In({3, 1}), Const(Ints({2, 3, 4}))}, {}});
  // Convolutions.
  cases.push_back({"Conv 3x3 pad 1 bias",
                   "Conv",
                   {In({1, 3, 6, 6}), In({4, 3, 3, 3}), In({4})},
                   {{"pads", Ints64{1, 1, 1, 1}}}});
  cases.push_back({"Conv strided dilated asymmetric",
                   "Conv",
                   {In({2, 2, 9, 8}), In({3, 2, 3, 2})},
                   {{"strides", Ints64{2, 1}},
                    {"dilations", Ints64{2, 1}},
                    {"pads", Ints64{1, 0, 2, 1}}}});
  cases.push_back({"Conv depthwise",
                   "Conv",
                   {In({1, 4, 7, 7}), In({4, 1, 3, 3}), In({4})},
                   {{"group", int64_t{4}},
                    {"pads", Ints64{1, 1, 1, 1}},
                    {"strides", Ints64{2, 2}}}});
  cases.push_back({"Conv grouped",
                   "Conv",
                   {In({1, 4, 5, 5}), In({6, 2, 3, 3}), In({6})},
                   {{"group", int64_t{2}}}});
  cases.push_back({"Conv depthwise multiplier 2",
                   "Conv",
                   {In({1, 2, 5, 5}), In({4, 1, 3, 3})},
                   {{"group", int64_t{2}}, {"pads", Ints64{1, 1, 1, 1}}}});
  cases.push_back({"Conv 1-D",
                   "Conv",
                   {In({1, 3, 10}), In({2, 3, 3})},
                   {{"strides", Ints64{2}}}});
  cases.push_back(
      {"Conv SAME_UPPER",
       "Conv",
       {In({1, 2, 5, 6}), In({2, 2, 2, 3})},
       {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints64{2, 2}}}});
  // Winograd's transforms (any table of the right shape; odd extents leave
  // the last tile part outside the input).
  cases.push_back({"WinogradInputTransform",
                   "WinogradInputTransform",
                   {In({2, 3, 6, 5}), In({4, 4, 4, 4})},
                   {}});
  // A constant table zero outside F(2x2, 3x3)'s pairs of columns takes the
  // 4-term form (ops/winograd.cc): the pass's table, and other values on
  // the same pairs (the form reads them, it does not assume them).
  cases.push_back({"WinogradInputTransform F(2x2,3x3) table",
                   "WinogradInputTransform",
                   {In({2, 3, 6, 5}), Const(WinogradInputTable())},
                   {}});
  cases.push_back({"WinogradInputTransform other values on the pairs",
                   "WinogradInputTransform",
                   {In({1, 2, 4, 8}), Const(OtherValuesOnThePairs())},
                   {}});
  cases.push_back({"WinogradOutputTransform bias",
                   "WinogradOutputTransform",
                   {In({4, 4, 3, 2, 2, 3}), In({2, 2, 4, 4}), In({3})},
                   {}});
  cases.push_back({"WinogradOutputTransform",
                   "WinogradOutputTransform",
                   {In({5, 5, 2, 1, 3, 2}), In({3, 3, 5, 5})},
                   {}});
  cases.push_back({"ConvTranspose",
                   "ConvTranspose",
                   {In({1, 3, 4, 4}), In({3, 2, 3, 3}), In({2})},
                   {{"strides", Ints64{2, 2}},
                    {"pads", Ints64{1, 1, 1, 1}},
                    {"output_padding", Ints64{1, 1}}}});
  cases.push_back({"ConvTranspose 1-D",
                   "ConvTranspose",
                   {In({2, 2, 5}), In({2, 3, 4})},
                   {}});
  // Matrix products.
  cases.push_back({"Gemm transB bias",
                   "Gemm",
                   {In({3, 5}), In({4, 5}), In({4})},
                   {{"transB", int64_t{1}}}});
  cases.push_back({"Gemm transA alpha beta",
                   "Gemm",
                   {In({5, 3}), In({5, 4}), In({3, 4})},
                   {{"transA", int64_t{1}}, {"alpha", 0.5}, {"beta", 2.0}}});
  cases.push_back({"MatMul", "MatMul", {In({3, 5}), In({5, 4})}, {}});
  cases.push_back({"MatMul batched broadcast",
                   "MatMul",
                   {In({2, 1, 3, 4}), In({3, 4, 5})},
                   {}});
  cases.push_back(
      {"MatMul vector matrix", "MatMul", {In({4}), In({2, 4, 3})}, {}});
  cases.push_back(
      {"MatMul matrix vector", "MatMul", {In({3, 4}), In({4})}, {}});
  // Pools.
  cases.push_back({"MaxPool 3x3 s2 p1",
                   "MaxPool",
                   {In({1, 2, 7, 7})},
                   {{"kernel_shape", Ints64{3, 3}},
                    {"strides", Ints64{2, 2}},
                    {"pads", Ints64{1, 1, 1, 1}}}});
  cases.push_back({"MaxPool ceil",
                   "MaxPool",
                   {In({1, 2, 6, 6})},
                   {{"kernel_shape", Ints64{3, 3}},
                    {"strides", Ints64{2, 2}},
                    {"ceil_mode", int64_t{1}}}});
  cases.push_back({"AveragePool exclude pad",
                   "AveragePool",
                   {In({1, 2, 6, 6})},
                   {{"kernel_shape", Ints64{3, 3}},
                    {"strides", Ints64{2, 2}},
                    {"pads", Ints64{1, 1, 1, 1}}}});
  cases.push_back({"AveragePool ceil include pad",
                   "AveragePool",
                   {In({1, 2, 7, 7})},
                   {{"kernel_shape", Ints64{3, 3}},
                    {"strides", Ints64{2, 2}},
                    {"pads", Ints64{1, 1, 0, 0}},
                    {"ceil_mode", int64_t{1}},
                    {"count_include_pad", int64_t{1}}}});
  cases.push_back({"AveragePool include pad",
                   "AveragePool",
                   {In({1, 2, 6, 6})},
                   {{"kernel_shape", Ints64{3, 3}},
                    {"pads", Ints64{1, 1, 1, 1}},
                    {"count_include_pad", int64_t{1}}}});
  cases.push_back(
      {"AveragePool",
       "AveragePool",
       {In({2, 3, 6, 5})},
       {{"kernel_shape", Ints64{2, 2}}, {"strides", Ints64{2, 1}}}});
  cases.push_back(
      {"GlobalAveragePool", "GlobalAveragePool", {In({2, 3, 4, 5})}, {}});
  cases.push_back({"GlobalMaxPool", "GlobalMaxPool", {In({2, 3, 4, 5})}, {}});
  // Normalizations and reductions.
  cases.push_back(
      {"Softmax axis 1", "Softmax", {In({2, 3, 4})}, {{"axis", int64_t{1}}}});
  cases.push_back({"Softmax 1-D", "Softmax", {In({7})}, {}});
  cases.push_back(
      {"LogSoftmax", "LogSoftmax", {In({3, 6})}, {{"axis", int64_t{-1}}}});
  cases.push_back({"LayerNormalization",
                   "LayerNormalization",
                   {In({2, 3, 8}), In({8}), In({8})},
                   {{"axis", int64_t{-1}}, {"epsilon", 1e-5}}});
  cases.push_back({"LayerNormalization axis 1 no bias",
                   "LayerNormalization",
                   {In({2, 3, 4}), In({3, 4})},
                   {{"axis", int64_t{1}}}});
  cases.push_back({"ReduceMean keepdims",
                   "ReduceMean",
                   {In({2, 3, 4})},
                   {{"axes", Ints64{1}}, {"keepdims", int64_t{1}}}});
  cases.push_back({"ReduceSum axes input",
                   "ReduceSum",
                   {In({2, 3, 4}), Const(Ints({0, -1}))},
                   {{"keepdims", int64_t{0}}}});
  cases.push_back(
      {"ReduceMax all", "ReduceMax", {In({3, 5})}, {{"keepdims", int64_t{0}}}});
  cases.push_back(
      {"ReduceMin", "ReduceMin", {In({3, 5})}, {{"axes", Ints64{0}}}});
  // Data movement.
  cases.push_back(
      {"Transpose", "Transpose", {In({2, 3, 4})}, {{"perm", Ints64{2, 0, 1}}}});
  cases.push_back({"Concat",
                   "Concat",
                   {In({2, 1, 3}), In({2, 4, 3}), In({2, 2, 3})},
                   {{"axis", int64_t{1}}}});
  cases.push_back({"Slice negative step INT64_MAX",
                   "Slice",
                   {In({5, 8}), Const(Ints({-1, 1})),
                    Const(Ints({std::numeric_limits<int64_t>::min(),
                                std::numeric_limits<int64_t>::max()})),
                    Const(Ints({0, 1})), Const(Ints({-2, 3}))},
                   {}});
  cases.push_back({"Gather scalar",
                   "Gather",
                   {In({3, 4, 5}), Const(Ints({-2}, {}))},
                   {{"axis", int64_t{1}}}});
  cases.push_back({"Pad constant",
                   "Pad",
                   {In({3, 4}), Const(Ints({1, -1, 2, 2})), Const(Scalar(1.5))},
                   {{"mode", std::string("constant")}}});
  return cases;
}

void PrintTo(const KernelCase& c, std::ostream* os) { *os << c.label; }

class EmittedKernel : public ::testing::TestWithParam<KernelCase> {};

TEST_P(EmittedKernel, MatchesHostEvaluation) {
  const KernelCase& c = GetParam();
  // 1. The one-node graph, with random data for its tensor inputs.
  GraphBuilder b;
  std::vector<int> inputs;
  std::map<int, TensorData> data;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Operand& operand = c.inputs[i];
    if (operand.absent) {
      inputs.push_back(kNoValue);
    } else if (operand.constant) {
      inputs.push_back(b.Const("c" + std::to_string(i), *operand.constant));
    } else {
      const int id = b.Input("x" + std::to_string(i), F32(operand.shape));
      TensorData t(DType::Float32(), operand.shape);
      FillRandom(&t, 17 + i);
      if (operand.positive) {
        for (double& v : t.values) v = std::fabs(v) + 0.125;
      }
      data[id] = t;
      inputs.push_back(id);
    }
  }
  const int y = b.Add1(c.op, inputs, c.attrs);
  b.Output(y);
  ASSERT_TRUE(InferTypes(b.graph).ok());
  ASSERT_TRUE(AddAveragePoolCounts(b.graph).ok());
  // 2. Its partition: one kernel step.
  absl::StatusOr<KernelPartition> partition = PartitionGraph(b.graph);
  ASSERT_TRUE(partition.ok()) << partition.status();
  ASSERT_EQ(partition->steps.size(), 1u);
  const GraphStep& step = partition->steps[0];
  ASSERT_EQ(step.kind, GraphStep::Kind::kKernel) << c.label;
  SCOPED_TRACE(step.workload);
  // 3. The host evaluation.
  std::vector<const TensorData*> node_inputs;
  for (int in : b.graph.nodes()[0].inputs) {
    if (in == kNoValue) {
      node_inputs.push_back(nullptr);
    } else if (b.graph.IsConstant(in)) {
      node_inputs.push_back(&*b.graph.value(in).constant);
    } else {
      node_inputs.push_back(&data[in]);
    }
  }
  absl::StatusOr<std::vector<TensorData>> expected =
      EvaluateNode(b.graph.nodes()[0], node_inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();
  const TensorData& want = (*expected)[0];
  // 4. The workload's arguments, its reference, and its compiled kernel.
  absl::StatusOr<Workload> w = ParseWorkloadSpec(step.workload);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(step.args.size(), w->inputs().size() + 1);
  std::vector<TensorData> args;
  for (size_t a = 0; a + 1 < step.args.size(); ++a) {
    const int v = step.args[a];
    TensorData t = b.graph.IsConstant(v) ? *b.graph.value(v).constant : data[v];
    t.shape = w->inputs()[a].shape();
    int64_t count = 1;
    for (int64_t d : t.shape) count *= d;
    ASSERT_EQ(static_cast<int64_t>(t.values.size()), count);
    args.push_back(t);
  }
  absl::StatusOr<std::vector<TensorData>> reference = RunReference(*w, args);
  ASSERT_TRUE(reference.ok()) << reference.status();
  TensorData ref = (*reference)[0];
  ref.shape = want.shape;
  EXPECT_TRUE(CheckAllClose(ref, want, 1e-5, 1e-6, "reference").ok())
      << CheckAllClose(ref, want, 1e-5, 1e-6, "reference");

  const Target target = HostTarget(1);
  absl::StatusOr<KernelProgram> program =
      MakeKernelProgram(*w, nullptr, target);
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CompiledKernel> kernel = Compile(program->lowered, target);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::vector<std::vector<float>> arrays;
  for (const TensorData& t : args) {
    arrays.emplace_back(t.values.begin(), t.values.end());
  }
  arrays.emplace_back(want.values.size(), -12345.0f);
  std::vector<float*> pointers;
  for (std::vector<float>& a : arrays) pointers.push_back(a.data());
  ASSERT_EQ(kernel->Call(pointers), 0);
  TensorData actual = want;
  for (size_t e = 0; e < actual.values.size(); ++e) {
    actual.values[e] = arrays.back()[e];
  }
  absl::Status close = CheckAllClose(actual, want, 1e-4, 1e-5, "kernel");
  EXPECT_TRUE(close.ok()) << close;
}

std::string CaseName(const ::testing::TestParamInfo<KernelCase>& info) {
  std::string name;
  for (char ch : info.param.label) {
    name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllFloatOps, EmittedKernel,
                         ::testing::ValuesIn(Cases()), CaseName);

// Every operator with an emitter appears in the table above.
TEST(EmittedKernel, EveryEmitterIsCovered) {
  std::set<std::string> covered;
  for (const KernelCase& c : Cases()) covered.insert(c.op);
  for (const std::string& op : SupportedOps()) {
    const OpDef* def = FindOpDef(op);
    if (def->emit) {
      EXPECT_TRUE(covered.count(op)) << op << " has no case";
    }
  }
}

// Which form the input transform's emitter takes: four products per
// element (one `=` statement) for a constant table zero outside the pairs,
// the dense sum (`+=`) for any other table, constant or not.
TEST(EmittedKernel, InputTransformTakesTheFourTermFormOnlyForPairTables) {
  TensorData dense(DType::Float32(), {4, 4, 4, 4});
  FillRandom(&dense, 7);
  struct Case {
    const char* label;
    std::optional<TensorData> table;  // nullopt: a graph input
    bool four_terms;
  };
  const Case cases[] = {
      {"F(2x2,3x3)", WinogradInputTable(), true},
      {"other values on the pairs", OtherValuesOnThePairs(), true},
      {"dense constant", dense, false},
      {"table as an input", std::nullopt, false}};
  for (const Case& c : cases) {
    GraphBuilder b;
    const int x = b.Input("x", F32({1, 2, 4, 4}));
    const int table = c.table.has_value() ? b.Const("b", *c.table)
                                          : b.Input("b", F32({4, 4, 4, 4}));
    b.Output(b.Add1("WinogradInputTransform", {x, table}));
    ASSERT_TRUE(InferTypes(b.graph).ok()) << c.label;
    absl::StatusOr<KernelPartition> partition = PartitionGraph(b.graph);
    ASSERT_TRUE(partition.ok()) << c.label << ": " << partition.status();
    ASSERT_EQ(partition->steps.size(), 1u) << c.label;
    const std::string& text = partition->steps[0].workload;
    const bool dense_sum = text.find("+=") != std::string::npos;
    EXPECT_EQ(dense_sum, !c.four_terms) << c.label << ": " << text;
    const bool elementwise =
        text.find("out[v0,v1,v2,v3,v4,v5,v6,v7] =") != std::string::npos;
    EXPECT_EQ(elementwise, c.four_terms) << c.label << ": " << text;
  }
}

}  // namespace
}  // namespace lathe::graph
