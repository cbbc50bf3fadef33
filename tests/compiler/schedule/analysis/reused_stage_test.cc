#include "compiler/schedule/analysis/reused_stage.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/ir/buffer.h"
#include "compiler/workload/spec.h"

namespace lathe {
namespace {

Program Initial(const std::string& spec) {
  return ParseWorkloadSpec(spec).value().InitialProgram().value();
}

TEST(HasGuardedLoad, FindsASelectThatLoadsInABranch) {
  BufferPtr x = MakeBuffer("X", DType::Float32(), {8});
  Expr i = Var("i");
  Expr padded = Select(i >= 1, Load(x, {i - 1}), FloatImm(0.0));
  EXPECT_TRUE(HasGuardedLoad(padded));
  EXPECT_TRUE(HasGuardedLoad(padded * FloatImm(2.0)));
  EXPECT_FALSE(HasGuardedLoad(Load(x, {i})));
  EXPECT_FALSE(HasGuardedLoad(
      Select(Load(x, {i}) > FloatImm(0.0), FloatImm(1.0), FloatImm(0.0))));
}

TEST(HasMathCall, FindsAFunctionCallAnywhereInTheValue) {
  BufferPtr x = MakeBuffer("X", DType::Float32(), {8});
  Expr i = Var("i");
  EXPECT_TRUE(HasMathCall(Call("exp", {Load(x, {i})}, DType::Float32())));
  EXPECT_TRUE(HasMathCall(FloatImm(1.0) +
                          Call("sqrt", {Load(x, {i})}, DType::Float32())));
  EXPECT_FALSE(HasMathCall(Load(x, {i}) * FloatImm(2.0)));
  EXPECT_FALSE(HasMathCall(Select(i >= 1, Load(x, {i - 1}), FloatImm(0.0))));
}

TEST(IsReusedStage, ConvPaddingIsReusedAcrossOutputChannels) {
  Program conv = Initial("conv2d_nchw:N=1,C=3,H=8,W=8,K=4,R=3,S=3,pad=1");
  const BlockNode& pad = *conv.FindBlock("pad");
  EXPECT_TRUE(IsReusedStage(conv, pad, HasGuardedLoad, UnitIterVars::kCount));
  EXPECT_TRUE(IsReusedStage(conv, pad, HasGuardedLoad, UnitIterVars::kIgnore));
  // Not costly to the caller: kept out of the test.
  EXPECT_FALSE(IsReusedStage(conv, pad, HasMathCall, UnitIterVars::kCount));
}

TEST(IsReusedStage, PoolingPaddingIsIndexedByEveryReaderVariable) {
  Program pool = Initial("max_pool2d:N=1,C=2,H=7,W=7,R=3,S=3,stride=2,pad=1");
  EXPECT_FALSE(IsReusedStage(pool, *pool.FindBlock("pad"), HasGuardedLoad,
                             UnitIterVars::kCount));
}

TEST(IsReusedStage, AUnitVariableCountsOnlyWhenAsked) {
  const std::string stages =
      "custom:T[i,k] = exp(A[i,k]); C[i,j] += T[i,k] * B[k,j]";
  Program reused = Initial(stages + "|i=4,j=5,k=6");
  const BlockNode& t = *reused.FindBlock("T");
  EXPECT_TRUE(IsReusedStage(reused, t, HasMathCall, UnitIterVars::kIgnore));
  EXPECT_FALSE(IsReusedStage(reused, t, HasGuardedLoad, UnitIterVars::kCount));

  Program unit = Initial(stages + "|i=4,j=1,k=6");
  const BlockNode& u = *unit.FindBlock("T");
  EXPECT_TRUE(IsReusedStage(unit, u, HasMathCall, UnitIterVars::kCount));
  EXPECT_FALSE(IsReusedStage(unit, u, HasMathCall, UnitIterVars::kIgnore));
}

TEST(IsWindowReusedStage, PoolingAndDepthwisePaddingAreReadThroughWindows) {
  Program pool = Initial("max_pool2d:N=1,C=2,H=7,W=7,R=3,S=3,stride=2,pad=1");
  EXPECT_TRUE(
      IsWindowReusedStage(pool, *pool.FindBlock("pad"), HasGuardedLoad));
  Program depthwise = Initial(
      "custom:input X[1,4,9,9]; input W[4,3,3]; "
      "Y[n,c,h,w] += X?[n,c,h+r-1,w+s-1] * W[c,r,s]|n=1,c=4,h=9,w=9,r=3,s=3");
  const BlockNode& pad = *depthwise.FindBlock("X_pad");
  EXPECT_TRUE(IsWindowReusedStage(depthwise, pad, HasGuardedLoad));
  // Not costly to the caller: no.
  EXPECT_FALSE(IsWindowReusedStage(depthwise, pad, HasMathCall));
}

TEST(IsWindowReusedStage, WindowsOfOneElementDoNotOverlap) {
  // A 1x1 window (r and s of extent 1) reads each padded element once.
  Program pointwise = Initial(
      "custom:input X[1,4,9,9]; input W[4,1,1]; "
      "Y[n,c,h,w] += X?[n,c,h+r-1,w+s-1] * W[c,r,s]|n=1,c=4,h=9,w=9,r=1,s=1");
  EXPECT_FALSE(IsWindowReusedStage(pointwise, *pointwise.FindBlock("X_pad"),
                                   HasGuardedLoad));
  // An element-wise reader of a padded stage: no window at all.
  Program shifted = Initial("custom:input X[8]; Y[i] = X?[i-1] * 2|i=8");
  ASSERT_NE(shifted.FindBlock("X_pad"), nullptr);
  EXPECT_FALSE(IsWindowReusedStage(shifted, *shifted.FindBlock("X_pad"),
                                   HasGuardedLoad));
}

// Softmax as a model's kernel has it: exp(x - max) read by the sum and by
// the division.
constexpr char kSoftmax[] =
    "custom:input X[4,16]; M[i] max= X[i,k]; E[i,j] = exp(X[i,j] - M[i]); "
    "S[i] += E[i,k]; Y[i,j] = E[i,j] / S[i]|i=4,j=16,k=16";

TEST(IsSharedStage, AStageReadByTwoBlocks) {
  Program softmax = Initial(kSoftmax);
  ASSERT_NE(softmax.FindBlock("E"), nullptr);
  EXPECT_TRUE(IsSharedStage(softmax, *softmax.FindBlock("E"), HasMathCall));
  // Read twice, but not costly to the caller.
  EXPECT_FALSE(IsSharedStage(softmax, *softmax.FindBlock("E"),
                             [](const Expr&) { return false; }));
  // One reader, read twice within it, is not shared.
  Program once =
      Initial("custom:input X[16]; E[i] = exp(X[i]); Y[i] = E[i] * E[i]|i=16");
  EXPECT_FALSE(IsSharedStage(once, *once.FindBlock("E"), HasMathCall));
}

}  // namespace
}  // namespace lathe
