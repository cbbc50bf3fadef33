// Tests of compiler/interp/interpreter.h: programs it runs correctly, and
// its speed (printed, never asserted); the errors it must report are in
// interpreter_errors_test.cc.
#include "compiler/interp/interpreter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "compiler/interp/random_fill.h"
#include "compiler/ir/printer.h"
#include "compiler/te/tensor.h"
#include "tests/compiler/interp/interpreter_programs.h"

namespace lathe {
namespace {

using interp_testing::Elementwise;
using interp_testing::ElementwiseSpec;
using interp_testing::Filled;
using interp_testing::MakeBlock;
using interp_testing::MakeProgram;
using interp_testing::Matmul;
using interp_testing::NestedLocalAlloc;

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
  BufferPtr b = MakeBuffer("B", DType::Float32(), {8});
  BufferPtr c = MakeBuffer("C", DType::Int32(), {1});
  Expr x = Load(a, {0});
  std::vector<Expr> values = {
      Call("exp", {x}, DType::Float32()),
      Call("sqrt", {x}, DType::Float32()),
      Call("log", {x}, DType::Float32()),
      Call("tanh", {x}, DType::Float32()),
      Call("abs", {Expr(0.0) - x}, DType::Float32()),
      Cast(DType::Float32(), Cast(DType::Int32(), x * 3.0)),
      Call("erf", {x - Expr(2.0)}, DType::Float32()),
      Call("pow", {x, Expr(1.5)}, DType::Float32())};
  std::vector<StmtPtr> stores;
  for (int k = 0; k < 8; ++k) stores.push_back(MakeStore(b, {k}, values[k]));
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
                                 f(std::log(2.5)), f(std::tanh(2.5)), 2.5, 7,
                                 f(std::erf(0.5)), f(std::pow(2.5, 1.5))}));
  EXPECT_EQ(cd.values[0], -7);  // truncation toward zero
}

TEST(Interpreter, PowTakesTwoArgumentsAndTheOthersOne) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {1});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {1});
  Expr x = Load(a, {0});
  for (Expr bad : {Call("pow", {x}, DType::Float32()),
                   Call("erf", {x, x}, DType::Float32())}) {
    Program p = MakeProgram("f", {a}, {b},
                            MakeBlock("B", {}, {}, MakeStore(b, {0}, bad)));
    TensorData ad = Filled(a, {2.5});
    TensorData bd = TensorData::Like(*b);
    absl::Status st = Interpret(p, {&ad, &bd});
    EXPECT_FALSE(st.ok()) << bad.ToString();
    EXPECT_NE(std::string(st.message()).find("Call has"), std::string::npos)
        << st;
  }
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
