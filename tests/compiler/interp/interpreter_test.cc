#include "compiler/interp/interpreter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>

#include "compiler/interp/random_fill.h"
#include "compiler/ir/printer.h"
#include "compiler/te/tensor.h"

namespace lathe {
namespace {

using ::testing::HasSubstr;

// ---- Builders for hand-made programs ---------------------------------------

std::unique_ptr<BlockNode> MakeBlock(const std::string& name,
                                     std::vector<IterVar> iter_vars,
                                     std::vector<Expr> iter_values,
                                     StmtPtr body) {
  auto block = std::make_unique<BlockNode>();
  block->name = name;
  block->iter_vars = std::move(iter_vars);
  block->iter_values = std::move(iter_values);
  block->body = std::move(body);
  return block;
}

Program MakeProgram(const std::string& name, std::vector<BufferPtr> inputs,
                    std::vector<BufferPtr> outputs, StmtPtr body,
                    std::vector<BufferPtr> root_allocs = {}) {
  Program p;
  p.name = name;
  p.inputs = std::move(inputs);
  p.outputs = std::move(outputs);
  p.root = std::make_unique<BlockNode>();
  p.root->name = "root";
  p.root->alloc_buffers = std::move(root_allocs);
  p.root->body = std::move(body);
  return p;
}

// for i in range(loop_extent): block NAME(vi = spatial(iter_extent, value(i))):
//   out[vi] = fn(vi)
struct ElementwiseSpec {
  int64_t loop_extent = 4;
  int64_t iter_extent = 4;
  std::function<Expr(const Expr& i)> iter_value = [](const Expr& i) {
    return i;
  };
  std::function<Expr(const Expr& vi)> value;
  std::function<Expr(const Expr& i, const Expr& vi)> predicate;  // optional
};

Program Elementwise(const BufferPtr& in, const BufferPtr& out,
                    const ElementwiseSpec& spec) {
  Expr i = Var("i");
  Expr vi = Var("vi");
  auto block =
      MakeBlock(out->name, {{vi, spec.iter_extent, IterType::kSpatial}},
                {spec.iter_value(i)}, MakeStore(out, {vi}, spec.value(vi)));
  if (spec.predicate) block->predicate = spec.predicate(i, vi);
  return MakeProgram("f", {in}, {out},
                     MakeFor(i, spec.loop_extent, std::move(block)));
}

TensorData Filled(const BufferPtr& b, const std::vector<double>& values) {
  TensorData t = TensorData::Like(*b);
  EXPECT_EQ(static_cast<size_t>(t.size()), values.size());
  t.values = values;
  return t;
}

te::Tensor MatmulOutput(const te::Tensor& a, const te::Tensor& b) {
  te::ReduceAxis k = te::MakeReduceAxis(a.shape()[1], "k");
  return te::ComputeReduction(
      "C", {a.shape()[0], b.shape()[1]}, {"i", "j"},
      [&](const std::vector<Expr>& ax) {
        return te::Sum(a({ax[0], k.var}) * b({k.var, ax[1]}), {k});
      });
}

Program Matmul(int64_t m, int64_t n, int64_t k) {
  te::Tensor a = te::Placeholder("A", {m, k});
  te::Tensor b = te::Placeholder("B", {k, n});
  return te::CreateProgram("matmul", {a, b}, {MatmulOutput(a, b)}).value();
}

// ---- Correct programs -------------------------------------------------------

TEST(Interpreter, MatmulMatchesHandComputedResult) {
  Program p = Matmul(2, 2, 3);
  TensorData a = Filled(p.inputs[0], {1, 2, 3, 4, 5, 6});  // [[1,2,3],[4,5,6]]
  TensorData b =
      Filled(p.inputs[1], {7, 8, 9, 10, 11, 12});  // [[7,8],[9,10],[11,12]]
  TensorData c = TensorData::Like(*p.outputs[0]);
  InterpretStats stats;
  ASSERT_TRUE(Interpret(p, {&a, &b, &c}, &stats).ok()) << PrintProgram(p);
  EXPECT_EQ(c.values, (std::vector<double>{58, 64, 139, 154}));
  EXPECT_EQ(stats.block_instances, 1 + 2 * 2 * 3);  // root + C
  EXPECT_EQ(stats.stores, 2 * 2 + 2 * 2 * 3);       // init + body
  ASSERT_EQ(stats.output_written.size(), 1u);
  EXPECT_EQ(stats.output_written[0], (std::vector<uint8_t>{1, 1, 1, 1}));
}

TEST(Interpreter, MatmulMatchesFloat32ReferenceOnRandomInputs) {
  Program p = Matmul(5, 7, 9);
  TensorData a = TensorData::Like(*p.inputs[0]);
  TensorData b = TensorData::Like(*p.inputs[1]);
  FillRandom(&a, 1);
  FillRandom(&b, 2);
  TensorData c = TensorData::Like(*p.outputs[0]);
  ASSERT_TRUE(Interpret(p, {&a, &b, &c}).ok());
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 7; ++j) {
      float acc = 0;
      for (int k = 0; k < 9; ++k) {
        acc += static_cast<float>(a.values[i * 9 + k]) *
               static_cast<float>(b.values[k * 7 + j]);
      }
      // Rounding after every operation reproduces float32 code bit for bit.
      EXPECT_EQ(c.values[i * 7 + j], static_cast<double>(acc))
          << i << ", " << j;
    }
  }
}

TEST(Interpreter, CompiledProgramRunsRepeatedlyFromScratch) {
  Program p = Matmul(3, 3, 3);
  absl::StatusOr<Interpreter> interp = Interpreter::Compile(p);
  ASSERT_TRUE(interp.ok()) << interp.status();
  for (uint64_t seed = 0; seed < 3; ++seed) {
    TensorData a = TensorData::Like(*p.inputs[0]);
    TensorData b = TensorData::Like(*p.inputs[1]);
    FillRandom(&a, seed);
    FillRandom(&b, seed + 100);
    TensorData c1 = TensorData::Like(*p.outputs[0]);
    TensorData c2 = TensorData::Like(*p.outputs[0]);
    ASSERT_TRUE(interp->Run({&a, &b, &c1}).ok());
    ASSERT_TRUE(Interpret(p, {&a, &b, &c2}).ok());
    EXPECT_EQ(c1.values, c2.values);
  }
}

TEST(Interpreter, SumReductionRunsInit) {
  te::Tensor x = te::Placeholder("X", {2, 3});
  te::ReduceAxis k = te::MakeReduceAxis(3, "k");
  te::Tensor y =
      te::ComputeReduction("Y", {2}, {"i"}, [&](const std::vector<Expr>& ax) {
        return te::Sum(x({ax[0], k.var}), {k});
      });
  Program p = te::CreateProgram("rowsum", {x}, {y}).value();
  TensorData xd = Filled(p.inputs[0], {1, 2, 3, -4, 5, 0.5});
  TensorData yd =
      Filled(p.outputs[0], {100, 100});  // stale values must not leak in
  ASSERT_TRUE(Interpret(p, {&xd, &yd}).ok());
  EXPECT_EQ(yd.values, (std::vector<double>{6, 1.5}));
}

TEST(Interpreter, MaxReductionStartsFromMinusInfinity) {
  te::Tensor x = te::Placeholder("X", {2, 3});
  te::ReduceAxis k = te::MakeReduceAxis(3, "k");
  te::Tensor y =
      te::ComputeReduction("Y", {2}, {"i"}, [&](const std::vector<Expr>& ax) {
        return te::MaxOver(x({ax[0], k.var}), {k});
      });
  Program p = te::CreateProgram("rowmax", {x}, {y}).value();
  // All negative: an identity of 0 instead of -inf would give 0.
  TensorData xd = Filled(p.inputs[0], {-3, -1, -2, -0.5, -7, -9});
  TensorData yd = TensorData::Like(*p.outputs[0]);
  ASSERT_TRUE(Interpret(p, {&xd, &yd}).ok());
  EXPECT_EQ(yd.values, (std::vector<double>{-1, -0.5}));
}

TEST(Interpreter, RootAllocatedIntermediateFeedsTheNextStage) {
  te::Tensor x = te::Placeholder("X", {4});
  te::Tensor y = te::Compute("Y", {4}, {"i"}, [&](const std::vector<Expr>& ax) {
    return x({ax[0]}) * 2.0;
  });
  te::Tensor z = te::Compute("Z", {4}, {"i"}, [&](const std::vector<Expr>& ax) {
    return Max(y({ax[0]}), Expr(0.0));
  });
  Program p = te::CreateProgram("f", {x}, {z}).value();
  TensorData xd = Filled(p.inputs[0], {1, -1, 0.25, -0.25});
  TensorData zd = TensorData::Like(*p.outputs[0]);
  ASSERT_TRUE(Interpret(p, {&xd, &zd}).ok());
  EXPECT_EQ(zd.values, (std::vector<double>{2, 0, 0.5, 0}));
}

TEST(Interpreter, PredicateSkipsInstancesAndLeavesElementsUnwritten) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {8});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {8});
  ElementwiseSpec spec;
  spec.loop_extent = 8;
  spec.iter_extent = 8;
  spec.value = [&](const Expr& vi) { return Load(a, {vi}) * 2.0; };
  spec.predicate = [](const Expr& i, const Expr&) { return i < 5; };
  Program p = Elementwise(a, b, spec);
  TensorData ad = Filled(a, {1, 2, 3, 4, 5, 6, 7, 8});
  TensorData bd = Filled(b, {-1, -1, -1, -1, -1, -1, -1, -1});
  InterpretStats stats;
  ASSERT_TRUE(Interpret(p, {&ad, &bd}, &stats).ok());
  EXPECT_EQ(bd.values, (std::vector<double>{2, 4, 6, 8, 10, -1, -1, -1}));
  EXPECT_EQ(stats.output_written[0],
            (std::vector<uint8_t>{1, 1, 1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(stats.block_instances, 1 + 5);
}

TEST(Interpreter, PredicateGuardsTheTailOfANonDivisibleSplit) {
  // for i0 in range(3): for i1 in range(4):
  //   block B(vi = spatial(10, i0 * 4 + i1)) where i0 * 4 + i1 < 10
  // The last two bindings (10, 11) are outside the extent, but guarded.
  BufferPtr a = MakeBuffer("A", DType::Float32(), {10});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {10});
  Expr i0 = Var("i0"), i1 = Var("i1"), vi = Var("vi");
  auto block = MakeBlock("B", {{vi, 10, IterType::kSpatial}}, {i0 * 4 + i1},
                         MakeStore(b, {vi}, Load(a, {vi}) + 1.0));
  block->predicate = i0 * 4 + i1 < 10;
  Program p = MakeProgram("f", {a}, {b},
                          MakeFor(i0, 3, MakeFor(i1, 4, std::move(block))));
  TensorData ad = TensorData::Like(*a);
  for (int k = 0; k < 10; ++k) ad.values[k] = k;
  TensorData bd = TensorData::Like(*b);
  InterpretStats stats;
  ASSERT_TRUE(Interpret(p, {&ad, &bd}, &stats).ok());
  for (int k = 0; k < 10; ++k) EXPECT_EQ(bd.values[k], k + 1);
  EXPECT_EQ(stats.block_instances, 1 + 10);
}

TEST(Interpreter, PredicateMayUseTheBlocksIterationVariables) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {4});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {4});
  ElementwiseSpec spec;
  spec.value = [&](const Expr& vi) { return Load(a, {vi}); };
  spec.predicate = [](const Expr&, const Expr& vi) {
    return FloorMod(vi, 2) == 0;
  };
  Program p = Elementwise(a, b, spec);
  TensorData ad = Filled(a, {1, 2, 3, 4});
  TensorData bd = Filled(b, {0, 0, 0, 0});
  ASSERT_TRUE(Interpret(p, {&ad, &bd}).ok());
  EXPECT_EQ(bd.values, (std::vector<double>{1, 0, 3, 0}));
}

// for i in range(2):
//   block outer(vi = spatial(2, i)):
//     alloc T: float32[2] local
//     for j in range(2):
//       block inner(vj = spatial(2, j)): T[vj] = A[vi, vj] * 3
//     for j2 in range(2):
//       block out(vj = spatial(2, j2)): B[vi, vj] = T[vj] + 1
// With `write_t_only_first_time`, inner writes T only when vi == 0, so the
// second instance of outer reads a fresh, unwritten T.
Program NestedLocalAlloc(bool write_t_only_first_time) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {2, 2});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {2, 2});
  BufferPtr t = MakeBuffer("T", DType::Float32(), {2}, BufferScope::kLocal);
  Expr i = Var("i"), vi = Var("vi"), j = Var("j"), vj = Var("vj"),
       j2 = Var("j2"), vj2 = Var("vj2");
  StmtPtr write_t = MakeStore(t, {vj}, Load(a, {vi, vj}) * 3.0);
  if (write_t_only_first_time) write_t = MakeIf(vi == 0, std::move(write_t));
  auto inner = MakeBlock("inner", {{vj, 2, IterType::kSpatial}}, {j},
                         std::move(write_t));
  auto out = MakeBlock("out", {{vj2, 2, IterType::kSpatial}}, {j2},
                       MakeStore(b, {vi, vj2}, Load(t, {vj2}) + 1.0));
  std::vector<StmtPtr> body;
  body.push_back(MakeFor(j, 2, std::move(inner)));
  body.push_back(MakeFor(j2, 2, std::move(out)));
  auto outer = MakeBlock("outer", {{vi, 2, IterType::kSpatial}}, {i},
                         MakeSeq(std::move(body)));
  outer->alloc_buffers = {t};
  return MakeProgram("nested", {a}, {b}, MakeFor(i, 2, std::move(outer)));
}

TEST(Interpreter, NestedBlockWithLocalAllocation) {
  Program p = NestedLocalAlloc(/*write_t_only_first_time=*/false);
  TensorData ad = Filled(p.inputs[0], {1, 2, 3, 4});
  TensorData bd = TensorData::Like(*p.outputs[0]);
  ASSERT_TRUE(Interpret(p, {&ad, &bd}).ok());
  EXPECT_EQ(bd.values, (std::vector<double>{4, 7, 10, 13}));
}

TEST(Interpreter, LocalAllocationIsFreshInEveryInstance) {
  Program p = NestedLocalAlloc(/*write_t_only_first_time=*/true);
  TensorData ad = Filled(p.inputs[0], {1, 2, 3, 4});
  TensorData bd = TensorData::Like(*p.outputs[0]);
  absl::Status s = Interpret(p, {&ad, &bd});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "read of T[0] before it was written, in block out");
}

TEST(Interpreter, SelectEvaluatesOnlyTheChosenArm) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {4});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {6});
  ElementwiseSpec spec;
  spec.loop_extent = 6;
  spec.iter_extent = 6;
  spec.value = [&](const Expr& vi) {
    return Select(vi < 4, Load(a, {vi}), Expr(0.0));
  };
  Program p = Elementwise(a, b, spec);
  TensorData ad = Filled(a, {1, 2, 3, 4});
  TensorData bd = TensorData::Like(*b);
  ASSERT_TRUE(Interpret(p, {&ad, &bd}).ok());
  EXPECT_EQ(bd.values, (std::vector<double>{1, 2, 3, 4, 0, 0}));
}

TEST(Interpreter, IfAndElse) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {4});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {4});
  Expr i = Var("i"), vi = Var("vi");
  auto block = MakeBlock("B", {{vi, 4, IterType::kSpatial}}, {i},
                         MakeIf(vi >= 2, MakeStore(b, {vi}, Load(a, {vi})),
                                MakeStore(b, {vi}, Expr(-1.0))));
  Program p = MakeProgram("f", {a}, {b}, MakeFor(i, 4, std::move(block)));
  TensorData ad = Filled(a, {1, 2, 3, 4});
  TensorData bd = TensorData::Like(*b);
  ASSERT_TRUE(Interpret(p, {&ad, &bd}).ok());
  EXPECT_EQ(bd.values, (std::vector<double>{-1, -1, 3, 4}));
}

TEST(Interpreter, IntegerFloorDivisionAndModuloRoundTowardMinusInfinity) {
  // B[vi] = (vi - 3) // 2 * 10 + (vi - 3) % 2, as int32 via int64 index math.
  BufferPtr a = MakeBuffer("A", DType::Int32(), {1});
  BufferPtr b = MakeBuffer("B", DType::Int64(), {6});
  ElementwiseSpec spec;
  spec.loop_extent = 6;
  spec.iter_extent = 6;
  spec.value = [](const Expr& vi) {
    Expr x = vi - 3;
    return FloorDiv(x, 2) * 10 + FloorMod(x, 2);
  };
  Program p = Elementwise(a, b, spec);
  TensorData ad = TensorData::Like(*a);
  TensorData bd = TensorData::Like(*b);
  ASSERT_TRUE(Interpret(p, {&ad, &bd}).ok());
  // x = -3..2: floordiv -2,-1,-1,0,0,1; floormod 1,0,1,0,1,0.
  EXPECT_EQ(bd.values, (std::vector<double>{-19, -10, -9, 0, 1, 10}));
}

TEST(Interpreter, Float32RoundsAfterEveryOperation) {
  // (A + 1) - 1 with A = 2^-30: float32 loses A in the addition, float64 not.
  for (DType dtype : {DType::Float32(), DType(DType::Code::kFloat, 64)}) {
    BufferPtr a = MakeBuffer("A", dtype, {1});
    BufferPtr b = MakeBuffer("B", dtype, {1});
    ElementwiseSpec spec;
    spec.loop_extent = 1;
    spec.iter_extent = 1;
    spec.value = [&](const Expr& vi) {
      Expr one = FloatImm(1.0, dtype);
      return (Load(a, {vi}) + one) - one;
    };
    Program p = Elementwise(a, b, spec);
    TensorData ad = Filled(a, {std::ldexp(1.0, -30)});
    TensorData bd = TensorData::Like(*b);
    ASSERT_TRUE(Interpret(p, {&ad, &bd}).ok());
    EXPECT_EQ(bd.values[0], dtype.bits() == 32 ? 0.0 : std::ldexp(1.0, -30))
        << dtype.ToString();
  }
}

TEST(Interpreter, Int8ArithmeticWraps) {
  BufferPtr a = MakeBuffer("A", DType::Int8(), {3});
  BufferPtr b = MakeBuffer("B", DType::Int8(), {3});
  ElementwiseSpec spec;
  spec.loop_extent = 3;
  spec.iter_extent = 3;
  spec.value = [&](const Expr& vi) {
    return Load(a, {vi}) * IntImm(100, DType::Int8());
  };
  Program p = Elementwise(a, b, spec);
  TensorData ad = Filled(a, {1, 2, -3});
  TensorData bd = TensorData::Like(*b);
  ASSERT_TRUE(Interpret(p, {&ad, &bd}).ok());
  EXPECT_EQ(bd.values,
            (std::vector<double>{100, -56, -44}));  // 200 - 256, -300 + 256
}

TEST(Interpreter, MathFunctionsAndCasts) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {1});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {6});
  BufferPtr c = MakeBuffer("C", DType::Int32(), {1});
  Expr x = Load(a, {0});
  std::vector<Expr> values = {
      Call("exp", {x}, DType::Float32()),
      Call("sqrt", {x}, DType::Float32()),
      Call("log", {x}, DType::Float32()),
      Call("tanh", {x}, DType::Float32()),
      Call("abs", {Expr(0.0) - x}, DType::Float32()),
      Cast(DType::Float32(), Cast(DType::Int32(), x * 3.0))};
  std::vector<StmtPtr> stores;
  for (int k = 0; k < 6; ++k) stores.push_back(MakeStore(b, {k}, values[k]));
  stores.push_back(
      MakeStore(c, {0}, Cast(DType::Int32(), Expr(0.0) - x * 3.0)));
  auto block = MakeBlock("B", {}, {}, MakeSeq(std::move(stores)));
  Program p = MakeProgram("f", {a}, {b, c}, std::move(block));
  TensorData ad = Filled(a, {2.5});
  TensorData bd = TensorData::Like(*b);
  TensorData cd = TensorData::Like(*c);
  ASSERT_TRUE(Interpret(p, {&ad, &bd, &cd}).ok());
  auto f = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  EXPECT_EQ(bd.values,
            (std::vector<double>{f(std::exp(2.5)), f(std::sqrt(2.5)),
                                 f(std::log(2.5)), f(std::tanh(2.5)), 2.5, 7}));
  EXPECT_EQ(cd.values[0], -7);  // truncation toward zero
}

// ---- Bugs the interpreter must catch ---------------------------------------

TEST(Interpreter, ReductionWithoutInitReadsBeforeWrite) {
  Program p = Matmul(4, 4, 4);
  p.FindBlock("C")->init = nullptr;
  TensorData a = TensorData::Like(*p.inputs[0]);
  TensorData b = TensorData::Like(*p.inputs[1]);
  TensorData c = TensorData::Like(*p.outputs[0]);
  absl::Status s = Interpret(p, {&a, &b, &c});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "read of C[0, 0] before it was written, in block C");
}

TEST(Interpreter, InitRunsOnlyWhenEveryReduceVariableIsZero) {
  // Reordering k outside i: every (i, j) is initialized at k == 0, and later
  // k accumulate: the result is still the matmul.
  Program p = Matmul(3, 2, 4);
  ForNode* i = p.FindLoop("i");
  ForNode* k = p.FindLoop("k");
  std::swap(i->var, k->var);
  std::swap(i->extent, k->extent);
  TensorData a = TensorData::Like(*p.inputs[0]);
  TensorData b = TensorData::Like(*p.inputs[1]);
  FillRandom(&a, 7);
  FillRandom(&b, 8);
  TensorData c = TensorData::Like(*p.outputs[0]);
  TensorData expected = TensorData::Like(*p.outputs[0]);
  Program ref = Matmul(3, 2, 4);
  ASSERT_TRUE(Interpret(ref, {&a, &b, &expected}).ok());
  ASSERT_TRUE(Interpret(p, {&a, &b, &c}).ok()) << PrintProgram(p);
  for (size_t e = 0; e < c.values.size(); ++e)
    EXPECT_FLOAT_EQ(c.values[e], expected.values[e]);
}

TEST(Interpreter, OutOfBoundsLoad) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {4});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {4});
  ElementwiseSpec spec;
  spec.value = [&](const Expr& vi) { return Load(a, {vi + 1}); };
  Program p = Elementwise(a, b, spec);
  TensorData ad = TensorData::Like(*a);
  TensorData bd = TensorData::Like(*b);
  absl::Status s = Interpret(p, {&ad, &bd});
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "load of A[4] outside shape [4], in block B");
}

TEST(Interpreter, OutOfBoundsStore) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {2, 3});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {2, 3});
  Expr i = Var("i"), vi = Var("vi");
  auto block = MakeBlock("B", {{vi, 2, IterType::kSpatial}}, {i},
                         MakeStore(b, {vi, vi * 3 - 1}, Expr(1.0)));
  Program p = MakeProgram("f", {a}, {b}, MakeFor(i, 2, std::move(block)));
  TensorData ad = TensorData::Like(*a);
  TensorData bd = TensorData::Like(*b);
  absl::Status s = Interpret(p, {&ad, &bd});
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "store to B[0, -1] outside shape [2, 3], in block B");
}

TEST(Interpreter, StoreToInput) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {4});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {4});
  Expr i = Var("i"), vi = Var("vi");
  std::vector<StmtPtr> body;
  body.push_back(MakeStore(b, {vi}, Expr(1.0)));
  body.push_back(MakeStore(a, {vi}, Expr(1.0)));
  auto block = MakeBlock("B", {{vi, 4, IterType::kSpatial}}, {i},
                         MakeSeq(std::move(body)));
  Program p = MakeProgram("f", {a}, {b}, MakeFor(i, 4, std::move(block)));
  TensorData ad = TensorData::Like(*a);
  TensorData bd = TensorData::Like(*b);
  absl::Status s = Interpret(p, {&ad, &bd});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "store to input A[0], in block B");
  EXPECT_EQ(ad.values, (std::vector<double>{0, 0, 0, 0}));
}

TEST(Interpreter, IterationValueOutsideItsExtent) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {8});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {8});
  ElementwiseSpec spec;
  spec.loop_extent = 8;
  spec.iter_extent = 4;  // a bad split: the binding reaches 7
  spec.value = [&](const Expr& vi) { return Load(a, {vi}); };
  Program p = Elementwise(a, b, spec);
  TensorData ad = Filled(a, {1, 1, 1, 1, 1, 1, 1, 1});
  TensorData bd = TensorData::Like(*b);
  absl::Status s = Interpret(p, {&ad, &bd});
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "block B: iteration variable vi = 4 outside [0, 4)");
  // Execution stopped at the first error, after the first four instances.
  EXPECT_EQ(bd.values, (std::vector<double>{1, 1, 1, 1, 0, 0, 0, 0}));
}

TEST(Interpreter, DivisionByZeroIsAnError) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {4});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {4});
  ElementwiseSpec spec;
  spec.value = [&](const Expr& vi) {
    return Load(a, {FloorMod(vi + 4, vi - 1)});
  };
  // vi = 0: 4 % -1 = 0; vi = 1: modulo by zero.
  Program p = Elementwise(a, b, spec);
  TensorData ad = TensorData::Like(*a);
  TensorData bd = TensorData::Like(*b);
  absl::Status s = Interpret(p, {&ad, &bd});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("division by zero in "));
  EXPECT_THAT(s.message(), HasSubstr(", in block B"));
}

TEST(Interpreter, RejectsWrongArguments) {
  Program p = Matmul(2, 3, 4);
  TensorData a = TensorData::Like(*p.inputs[0]);
  TensorData b = TensorData::Like(*p.inputs[1]);
  TensorData c = TensorData::Like(*p.outputs[0]);
  TensorData bad_shape(DType::Float32(), {3, 2});
  TensorData bad_dtype(DType::Int32(), {2, 3});

  absl::Status s = Interpret(p, {&a, &b});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "interpret matmul: expected 3 arguments (A, B, C), got 2");

  s = Interpret(p, {&a, &b, &bad_shape});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      s.message(),
      "interpret matmul: argument 2 (C) has shape [3, 2], expected [2, 3]");

  s = Interpret(p, {&a, &b, &bad_dtype});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("argument 2 (C) has dtype int32, expected float32"));

  s = Interpret(p, {&a, &a, &c});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);

  a.values[3] = 0.1;  // not a float32
  s = Interpret(p, {&a, &b, &c});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("argument 0 (A): value 0.1 at flat index 3"));
}

TEST(Interpreter, RejectsMalformedPrograms) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {4});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {4});
  BufferPtr t = MakeBuffer("T", DType::Float32(), {4});
  Expr stray = Var("stray");
  struct Case {
    std::function<Expr(const Expr&)> value;
    std::string message;
  };
  std::vector<Case> cases = {
      {[&](const Expr& vi) { return Load(a, {stray}) + Load(a, {vi}); },
       "variable stray is used outside its scope, in block B"},
      {[&](const Expr& vi) { return Load(t, {vi}); },
       "load from buffer T, which is neither a parameter nor allocated by an "
       "enclosing "
       "block, in block B"},
      {[&](const Expr& vi) {
         return Call("erf", {Load(a, {vi})}, DType::Float32());
       },
       "unknown function erf"},
  };
  for (const Case& c : cases) {
    ElementwiseSpec spec;
    spec.value = c.value;
    Program p = Elementwise(a, b, spec);
    absl::StatusOr<Interpreter> interp = Interpreter::Compile(p);
    ASSERT_FALSE(interp.ok()) << c.message;
    EXPECT_EQ(interp.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(interp.status().message(), HasSubstr(c.message));
  }
  // A block's iteration variable is not visible after the block.
  Expr i = Var("i"), vi = Var("vi");
  std::vector<StmtPtr> body;
  body.push_back(MakeBlock("B", {{vi, 4, IterType::kSpatial}}, {i},
                           MakeStore(b, {vi}, Expr(1.0))));
  body.push_back(MakeStore(b, {vi}, Expr(2.0)));
  Program p =
      MakeProgram("f", {a}, {b}, MakeFor(i, 4, MakeSeq(std::move(body))));
  EXPECT_THAT(
      Interpreter::Compile(p).status().message(),
      HasSubstr("variable vi is used outside its scope, in block root"));
}

TEST(Interpreter, RejectsABufferAllocatedTwice) {
  Program p = NestedLocalAlloc(/*write_t_only_first_time=*/false);
  p.root->alloc_buffers = p.FindBlock("outer")->alloc_buffers;
  absl::Status s = Interpreter::Compile(p).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      s.message(),
      HasSubstr("buffer T is allocated here but is already a parameter or "
                "allocated by another block, in block outer"));
}

// ---- Speed sanity (printed, never asserted) --------------------------------

TEST(Interpreter, MatmulThroughput) {
  Program p = Matmul(64, 64, 64);
  TensorData a = TensorData::Like(*p.inputs[0]);
  TensorData b = TensorData::Like(*p.inputs[1]);
  FillRandom(&a, 1);
  FillRandom(&b, 2);
  TensorData c = TensorData::Like(*p.outputs[0]);
  Interpreter interp = Interpreter::Compile(p).value();
  InterpretStats stats;
  // CPU time as well as wall time: on a loaded machine the former is the
  // interpreter's own speed.
  auto start = std::chrono::steady_clock::now();
  std::clock_t cpu_start = std::clock();
  int runs = 0;
  double secs = 0;
  do {
    ASSERT_TRUE(interp.Run({&a, &b, &c}, &stats).ok());
    ++runs;
    secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  } while (secs < 0.3);
  double cpu_secs =
      static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  double instances = static_cast<double>(stats.block_instances) * runs;
  std::printf(
      "interpreter: 64x64x64 matmul, %.1f M block instances/s wall, %.1f M per "
      "CPU "
      "second (%.2f ms per run)\n",
      instances / secs / 1e6, instances / cpu_secs / 1e6, secs / runs * 1e3);
}

}  // namespace
}  // namespace lathe
