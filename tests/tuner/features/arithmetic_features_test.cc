// Tests of the arithmetic feature group (tuner/features/arithmetic_features.h).
#include "tuner/features/arithmetic_features.h"

#include <gtest/gtest.h>

#include "compiler/workload/flop_count.h"
#include "tests/tuner/features/features_test_util.h"

namespace lathe::tuner {
namespace {

using testing::GroupRow;
using testing::MatmulNest;
using testing::RowOf;

GroupRow ArithmeticRow(const StoreContext& store) {
  return RowOf(ArithmeticFeatureSpecs(), store, ExtractArithmeticFeatures);
}

TEST(ArithmeticFeatures, MatmulIsOneMultiplyAddPerExecution) {
  MatmulNest mm(16);
  ProgramWalk walk = WalkProgram(mm.program);
  GroupRow row = ArithmeticRow(walk.stores[0]);
  EXPECT_EQ(row["arith.float_mad"], 16 * 16 * 16);
  EXPECT_EQ(row["arith.float_ops"], 2 * 16 * 16 * 16);
  EXPECT_EQ(row["arith.float_add_sub"], 0);
  EXPECT_EQ(row["arith.float_mul"], 0);
  EXPECT_EQ(row["arith.int_add_sub"], 0);  // plain loop variables as indices
  EXPECT_EQ(row["arith.select"], 0);
}

TEST(ArithmeticFeatures, CountsIndexArithmeticAsIntegerOps) {
  // Y[i * 4 + j] = exp(X[i * 4 + j]) / 2.0f - 1.0f over 8 x 4.
  BufferPtr x = MakeBuffer("X", DType::Float32(), {32});
  BufferPtr y = MakeBuffer("Y", DType::Float32(), {32});
  Expr i = Var("i"), j = Var("j");
  Expr value =
      Call("exp", {Load(x, {i * 4 + j})}, DType::Float32()) / Expr(2.0) -
      Expr(1.0);
  Program p = testing::MakeProgram(
      {x}, {y}, MakeFor(i, 8, MakeFor(j, 4, MakeStore(y, {i * 4 + j}, value))));
  ProgramWalk walk = WalkProgram(p);
  GroupRow row = ArithmeticRow(walk.stores[0]);
  const double n = 32;
  EXPECT_EQ(row["arith.int_add_sub"], 2 * n);  // store and load index
  EXPECT_EQ(row["arith.int_mul"], 2 * n);
  EXPECT_EQ(row["arith.float_math"], n);
  EXPECT_EQ(row["arith.float_div"], n);
  EXPECT_EQ(row["arith.float_add_sub"], n);
  EXPECT_EQ(row["arith.float_mad"], 0);
  EXPECT_EQ(row["arith.float_ops"], 3 * n);
}

TEST(ArithmeticFeatures, CountsSelectsComparisonsAndLogic) {
  // Padding: Y[i] = select(i >= 1 && i < 7, X[i - 1], 0.0f), and a max.
  BufferPtr x = MakeBuffer("X", DType::Float32(), {6});
  BufferPtr y = MakeBuffer("Y", DType::Float32(), {8});
  Expr i = Var("i");
  Expr value =
      Max(Select(i >= 1 && i < 7, Load(x, {i - 1}), Expr(0.0)), Expr(0.0));
  Program p =
      testing::MakeProgram({x}, {y}, MakeFor(i, 8, MakeStore(y, {i}, value)));
  GroupRow row = ArithmeticRow(WalkProgram(p).stores[0]);
  EXPECT_EQ(row["arith.int_cmp"], 2 * 8);
  EXPECT_EQ(row["arith.bool_op"], 8);
  EXPECT_EQ(row["arith.select"], 8);
  EXPECT_EQ(row["arith.int_add_sub"], 8);
  EXPECT_EQ(row["arith.float_min_max"], 8);
  EXPECT_EQ(row["arith.float_cmp"], 0);
}

TEST(ArithmeticFeatures, WeighsByGuardedExecutions) {
  // The unscheduled matmul's init runs 16 * 16 times (k == 0); it has no
  // arithmetic, but its guard makes the update's mad count the only one.
  Program lowered =
      testing::Lower(testing::InitialProgramOf("matmul:M=16,N=16,K=16"));
  ProgramWalk walk = WalkProgram(lowered);
  ASSERT_EQ(walk.stores.size(), 2u);
  EXPECT_EQ(ArithmeticRow(walk.stores[0])["arith.float_ops"], 0);
  EXPECT_EQ(ArithmeticRow(walk.stores[1])["arith.float_mad"], 4096);
}

TEST(ArithmeticFeatures,
     FloatOpsOfAScheduledProgramMatchTheWorkloadsFlopCount) {
  for (const std::string spec :
       {"matmul:M=64,N=64,K=64", "dense:M=32,N=64,K=48,bias=1,relu=1",
        "conv2d_nchw:N=1,C=8,H=10,W=10,K=16,R=3,S=3,stride=1,pad=1"}) {
    absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
    ASSERT_TRUE(workload.ok());
    absl::StatusOr<int64_t> flops = FlopCount(*workload);
    ASSERT_TRUE(flops.ok());
    Program lowered = testing::DefaultLowered(spec);
    double total = 0;
    for (const StoreContext& s : WalkProgram(lowered).stores) {
      total += ArithmeticRow(s)["arith.float_ops"];
    }
    EXPECT_EQ(total, static_cast<double>(*flops)) << spec << "\n"
                                                  << PrintProgram(lowered);
  }
}

}  // namespace
}  // namespace lathe::tuner
