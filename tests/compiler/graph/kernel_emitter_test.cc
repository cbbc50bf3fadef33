#include "compiler/graph/kernel_emitter.h"

#include "gtest/gtest.h"
#include "tests/compiler/graph/graph_builder.h"

namespace lathe::graph {
namespace {

using testing::F32;

KernelOperand GroupInput(int value, TensorType type) {
  KernelOperand operand;
  operand.present = true;
  operand.value = value;
  operand.type = std::move(type);
  operand.group_input = true;
  return operand;
}

TEST(KernelEmitter, AffineAndLiteralText) {
  EXPECT_EQ(KernelEmitter::Affine({{2, "v1"}, {1, "v4"}}, -1), "2*v1+v4-1");
  EXPECT_EQ(KernelEmitter::Affine({{1, "v0"}, {-3, "v2"}}, 4), "v0-3*v2+4");
  EXPECT_EQ(KernelEmitter::Affine({{-1, "v0"}}, 0), "-v0");
  EXPECT_EQ(KernelEmitter::Affine({}, 0), "0");
  EXPECT_EQ(KernelEmitter::Affine({{0, "v0"}}, 5), "5");
  EXPECT_EQ(KernelEmitter::Literal(0.5), "0.5");
  EXPECT_EQ(KernelEmitter::Literal(-2), "(-2)");
}

TEST(KernelEmitter, NamesInputsByFirstReadAndDeclaresThem) {
  KernelEmitter e;
  e.BeginNode({GroupInput(7, F32({2, 3})), GroupInput(4, F32({3}))},
              F32({2, 3}), "out");
  std::vector<std::string> v = e.NewVars({2, 3});
  absl::StatusOr<std::string> b = e.ReadBroadcast(1, v, {2, 3});
  absl::StatusOr<std::string> a = e.ReadBroadcast(0, v, {2, 3});
  ASSERT_TRUE(a.ok() && b.ok());
  e.Add("out", v, "=", *a + " + " + *b);
  EXPECT_EQ(e.Text(),
            "input in0[3]; input in1[2,3]; out[v0,v1] = in1[v0,v1] + in0[v1]");
  EXPECT_EQ(e.DimsText(), "v0=2,v1=3");
  EXPECT_EQ(e.declared_values(), (std::vector<int>{4, 7}));
}

TEST(KernelEmitter, BroadcastReadsUseZeroForExtentOne) {
  KernelEmitter e;
  e.BeginNode({GroupInput(0, F32({3, 1}))}, F32({2, 3, 4}), "out");
  std::vector<std::string> v = e.NewVars({2, 3, 4});
  EXPECT_EQ(*e.ReadBroadcast(0, v, {2, 3, 4}), "in0[v1,0]");
}

TEST(KernelEmitter, ScalarsAreOneElementTensors) {
  KernelEmitter e;
  e.BeginNode({GroupInput(0, F32({}))}, F32({}), "out");
  std::vector<std::string> v = e.NewVars({});
  EXPECT_EQ(v.size(), 1u);
  EXPECT_EQ(*e.ReadBroadcast(0, v, {}), "in0[0]");
  e.Add("out", v, "=", "in0[0]");
  EXPECT_EQ(e.Text(), "input in0[1]; out[v0] = in0[0]");
}

TEST(KernelEmitter, PaddedReadsOnlyOfGroupInputs) {
  KernelEmitter e;
  KernelOperand inner;
  inner.present = true;
  inner.value = 3;
  inner.type = F32({4});
  inner.name = "t0";
  e.BeginNode({GroupInput(1, F32({4})), inner}, F32({4}), "out");
  EXPECT_EQ(*e.Read(0, {"v0-1"}, /*padded=*/true), "in0?[v0-1]");
  EXPECT_EQ(e.Read(1, {"v0-1"}, /*padded=*/true).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(*e.Read(1, {"v0"}), "t0[v0]");
}

TEST(KernelEmitter, PadValuesAreDeclaredAndMustAgree) {
  KernelEmitter e;
  e.BeginNode({GroupInput(1, F32({4}))}, F32({4}), "out");
  ASSERT_TRUE(e.SetPadValue(0, -1.5).ok());
  EXPECT_FALSE(e.SetPadValue(0, 2).ok());
  std::vector<std::string> v = e.NewVars({4});
  e.Add("out", v, "=", *e.Read(0, {"v0+1"}, true));
  EXPECT_EQ(e.Text(), "input in0[4] pad -1.5; out[v0] = in0?[v0+1]");
}

TEST(KernelEmitter, ConstantInputsAreDeclaredConst) {
  KernelEmitter e;
  TensorData weights(DType::Float32(), {3});
  KernelOperand w = GroupInput(2, F32({3}));
  w.constant = &weights;
  e.BeginNode({GroupInput(1, F32({3})), w}, F32({3}), "out");
  std::vector<std::string> v = e.NewVars({3});
  const std::string x = *e.Read(0, v);  // declared first: in0
  const std::string weight = *e.Read(1, v);
  e.Add("out", v, "=", x + " * " + weight);
  EXPECT_EQ(e.Text(),
            "input in0[3]; input in1[3] const; out[v0] = in0[v0] * in1[v0]");
}

TEST(KernelEmitter, NonFloatTensorsAreNotRead) {
  KernelEmitter e;
  e.BeginNode({GroupInput(1, TensorType{DType::Int64(), {4}})}, F32({4}),
              "out");
  EXPECT_EQ(e.Read(0, {"v0"}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  KernelOperand literal = GroupInput(2, TensorType{DType::Int64(), {}});
  literal.literal = 3;
  e.BeginNode({literal}, F32({4}), "out");
  EXPECT_EQ(*e.Read(0, {"0"}), "3");
}

}  // namespace
}  // namespace lathe::graph
