// The reference of every operator on tiny shapes, against values computed by
// hand; custom workloads against the registry's operators.
#include "compiler/workload/reference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "compiler/workload/custom_workload.h"
#include "compiler/workload/spec.h"

namespace lathe {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Pointwise;

TensorData Tensor(std::vector<int64_t> shape, std::vector<double> values) {
  TensorData t(DType::Float32(), std::move(shape));
  EXPECT_EQ(t.values.size(), values.size());
  t.values = std::move(values);
  return t;
}

TensorData Iota(std::vector<int64_t> shape, double start = 1, double step = 1) {
  TensorData t(DType::Float32(), std::move(shape));
  for (size_t i = 0; i < t.values.size(); ++i) t.values[i] = start + step * i;
  return t;
}

TensorData Filled(std::vector<int64_t> shape, double value) {
  TensorData t(DType::Float32(), std::move(shape));
  for (double& v : t.values) v = value;
  return t;
}

// The values of the single output of `spec` on `inputs`.
std::vector<double> Output(const std::string& spec,
                           const std::vector<TensorData>& inputs) {
  absl::StatusOr<Workload> w = ParseWorkloadSpec(spec);
  EXPECT_TRUE(w.ok()) << w.status();
  if (!w.ok()) return {};
  absl::StatusOr<std::vector<TensorData>> out = RunReference(*w, inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].shape, w->outputs()[0].shape());
  return (*out)[0].values;
}

TEST(Reference, Matmul2x2) {
  EXPECT_THAT(Output("matmul:M=2,N=2,K=2", {Tensor({2, 2}, {1, 2, 3, 4}),
                                            Tensor({2, 2}, {5, 6, 7, 8})}),
              ElementsAre(19, 22, 43, 50));
  // Non-square: A[2,3] * B[3,1].
  EXPECT_THAT(Output("matmul:M=2,N=1,K=3", {Tensor({2, 3}, {1, 2, 3, 4, 5, 6}),
                                            Tensor({3, 1}, {1, 0, -1})}),
              ElementsAre(-2, -2));
}

TEST(Reference, BatchMatmulKeepsBatchesApart) {
  EXPECT_THAT(Output("batch_matmul:B=2,M=1,N=1,K=2",
                     {Tensor({2, 1, 2}, {1, 2, -1, 0.5}),
                      Tensor({2, 2, 1}, {3, 4, 2, 4})}),
              ElementsAre(11, 0));
}

TEST(Reference, DenseTransposesWeightsThenBiasThenRelu) {
  const TensorData x = Tensor({1, 2}, {1, 2});
  const TensorData w = Tensor({2, 2}, {1, 1, -3, 0});
  const TensorData bias = Tensor({2}, {0.5, 1});
  EXPECT_THAT(Output("dense:M=1,N=2,K=2", {x, w}), ElementsAre(3, -3));
  EXPECT_THAT(Output("dense:M=1,N=2,K=2,bias=1", {x, w, bias}),
              ElementsAre(3.5, -2));
  EXPECT_THAT(Output("dense:M=1,N=2,K=2,relu=1", {x, w}), ElementsAre(3, 0));
  EXPECT_THAT(Output("dense:M=1,N=2,K=2,bias=1,relu=1", {x, w, bias}),
              ElementsAre(3.5, 0));
}

TEST(Reference, ConvWithPaddingSumsOnlyInsideTaps) {
  // X = 1..9 in 3x3, a 3x3 kernel of ones, pad 1: each output is the sum of
  // the in-bounds neighbourhood.
  const std::vector<double> expected = {12, 21, 16, 27, 45, 33, 24, 39, 28};
  EXPECT_THAT(Output("conv2d_nchw:N=1,C=1,H=3,W=3,K=1,R=3,S=3,pad=1",
                     {Iota({1, 1, 3, 3}), Filled({1, 1, 3, 3}, 1)}),
              ElementsAreArray(expected));
  EXPECT_THAT(Output("conv2d_nhwc:N=1,C=1,H=3,W=3,K=1,R=3,S=3,pad=1",
                     {Iota({1, 3, 3, 1}), Filled({3, 3, 1, 1}, 1)}),
              ElementsAreArray(expected));
}

TEST(Reference, ConvNhwcInterleavesChannels) {
  // Channel 0 = 1..9, channel 1 = ones: the second adds the tap count.
  TensorData x(DType::Float32(), {1, 3, 3, 2});
  for (int i = 0; i < 9; ++i) {
    x.values[2 * i] = i + 1;
    x.values[2 * i + 1] = 1;
  }
  EXPECT_THAT(Output("conv2d_nhwc:N=1,C=2,H=3,W=3,K=1,R=3,S=3,pad=1",
                     {x, Filled({3, 3, 2, 1}, 1)}),
              ElementsAre(16, 27, 20, 33, 54, 39, 28, 45, 32));
}

TEST(Reference, ConvStrideAndDilation) {
  EXPECT_THAT(Output("conv2d_nchw:N=1,C=1,H=3,W=3,K=1,R=1,S=1,stride=2",
                     {Iota({1, 1, 3, 3}), Filled({1, 1, 1, 1}, 2)}),
              ElementsAre(2, 6, 14, 18));
  // 5x5 input 1..25, 2x2 kernel of ones dilated by 2: taps at +0 and +2.
  std::vector<double> expected;
  for (int p = 0; p < 3; ++p) {
    for (int q = 0; q < 3; ++q) {
      auto x = [](int h, int w) { return 1.0 + h * 5 + w; };
      expected.push_back(x(p, q) + x(p, q + 2) + x(p + 2, q) + x(p + 2, q + 2));
    }
  }
  EXPECT_THAT(Output("conv2d_nchw:N=1,C=1,H=5,W=5,K=1,R=2,S=2,dilation=2",
                     {Iota({1, 1, 5, 5}), Filled({1, 1, 2, 2}, 1)}),
              ElementsAreArray(expected));
}

TEST(Reference, ConvGroupsReadTheirOwnChannels) {
  // Two channels of one pixel: a=10, b=100. Per-group 1x1 weights.
  const TensorData x = Tensor({1, 2, 1, 1}, {10, 100});
  EXPECT_THAT(Output("conv2d_nchw:N=1,C=2,H=1,W=1,K=2,R=1,S=1,groups=2",
                     {x, Tensor({2, 1, 1, 1}, {2, 3})}),
              ElementsAre(20, 300));
  // Depthwise with multiplier 2: outputs 0,1 read channel 0; 2,3 channel 1.
  EXPECT_THAT(Output("conv2d_nchw:N=1,C=2,H=1,W=1,K=4,R=1,S=1,groups=2",
                     {x, Tensor({4, 1, 1, 1}, {1, 2, 3, 4})}),
              ElementsAre(10, 20, 300, 400));
  EXPECT_THAT(Output("conv2d_nhwc:N=1,C=2,H=1,W=1,K=4,R=1,S=1,groups=2",
                     {Tensor({1, 1, 1, 2}, {10, 100}),
                      Tensor({1, 1, 1, 4}, {1, 2, 3, 4})}),
              ElementsAre(10, 20, 300, 400));
  // Without groups every output reads both channels.
  EXPECT_THAT(Output("conv2d_nchw:N=1,C=2,H=1,W=1,K=1,R=1,S=1",
                     {x, Tensor({1, 2, 1, 1}, {1, 1})}),
              ElementsAre(110));
}

TEST(Reference, MaxPoolIgnoresPadding) {
  EXPECT_THAT(Output("max_pool2d:N=1,C=1,H=4,W=4,R=2,S=2,stride=2",
                     {Iota({1, 1, 4, 4})}),
              ElementsAre(6, 8, 14, 16));
  // All negative: a padded zero must never win.
  EXPECT_THAT(Output("max_pool2d:N=1,C=1,H=3,W=3,R=3,S=3,pad=1",
                     {Iota({1, 1, 3, 3}, -1, -1)}),
              ElementsAre(-1, -1, -2, -1, -1, -2, -4, -4, -5));
}

TEST(Reference, AvgPoolExcludesPaddingFromTheDivisor) {
  // Corners see 4 elements, edges 6, the centre 9.
  EXPECT_THAT(
      Output("avg_pool2d:N=1,C=1,H=3,W=3,R=3,S=3,pad=1", {Iota({1, 1, 3, 3})}),
      ElementsAre(3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7));
  EXPECT_THAT(
      Output("avg_pool2d:N=1,C=2,H=2,W=2,R=2,S=2", {Iota({1, 2, 2, 2})}),
      ElementsAre(2.5, 6.5));
}

TEST(Reference, SoftmaxRowsSumToOne) {
  std::vector<double> y =
      Output("softmax:M=3,N=2",
             {Tensor({3, 2}, {0, std::log(3.0), 1000, 1000, -5, 7})});
  ASSERT_EQ(y.size(), 6u);
  EXPECT_THAT(y[0], DoubleNear(0.25, 1e-7));
  EXPECT_THAT(y[1], DoubleNear(0.75, 1e-7));
  // Large inputs do not overflow: the row maximum is subtracted first.
  EXPECT_THAT(y[2], DoubleNear(0.5, 1e-7));
  EXPECT_THAT(y[3], DoubleNear(0.5, 1e-7));
  for (int row = 0; row < 3; ++row) {
    EXPECT_NEAR(y[2 * row] + y[2 * row + 1], 1.0, 1e-6);
  }
}

TEST(Reference, Elementwise) {
  EXPECT_THAT(Output("add:M=1,N=3", {Tensor({1, 3}, {1, 2, 3}),
                                     Tensor({1, 3}, {10, -2, 0.5})}),
              ElementsAre(11, 0, 3.5));
  EXPECT_THAT(Output("relu:M=2,N=2", {Tensor({2, 2}, {-1, 0, 2, -0.5})}),
              ElementsAre(0, 0, 2, 0));
}

TEST(Reference, OutputsAreRoundedToFloat32) {
  EXPECT_THAT(
      Output("add:M=1,N=1", {Tensor({1, 1}, {0.1}), Tensor({1, 1}, {0.2})}),
      ElementsAre(static_cast<double>(0.1f + 0.2f)));
}

TEST(Reference, RejectsTensorsThatDoNotMatch) {
  Workload w = *ParseWorkloadSpec("matmul:M=2,N=2,K=3");
  TensorData a = Iota({2, 3}), b = Iota({2, 3}), c(DType::Float32(), {2, 2});
  absl::Status s = RunReference(w, {&a, &b}, {&c});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      s.message(),
      "reference of matmul: input 1 (B) has shape [2, 3], expected [3, 2]");
  TensorData b_ok = Iota({3, 2});
  EXPECT_THAT(RunReference(w, {&a}, {&c}).message(),
              HasSubstr("got 1 inputs and 1 outputs, expected 2 and 1"));
  EXPECT_THAT(RunReference(w, {&a, nullptr}, {&c}).message(),
              HasSubstr("is null"));
  TensorData c_bad = c;
  c_bad.values.pop_back();
  EXPECT_THAT(RunReference(w, {&a, &b_ok}, {&c_bad}).message(),
              HasSubstr("holds 3 values for 4 elements"));
  EXPECT_TRUE(RunReference(w, {&a, &b_ok}, {&c}).ok());
}

// Random inputs of a workload, reproducible.
std::vector<TensorData> RandomInputs(const Workload& w, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<TensorData> inputs;
  for (const te::Tensor& t : w.inputs()) {
    TensorData d = TensorData::Like(*t.buffer());
    for (double& v : d.values) v = RoundToDType(dist(rng), d.dtype);
    inputs.push_back(std::move(d));
  }
  return inputs;
}

// A custom workload and a registry one that must compute the same.
void ExpectSameResults(const std::string& expr, const std::string& dims,
                       const std::string& spec) {
  SCOPED_TRACE(spec);
  absl::StatusOr<Workload> custom = ParseCustomWorkload(expr, dims);
  ASSERT_TRUE(custom.ok()) << custom.status();
  Workload registry = *ParseWorkloadSpec(spec);
  ASSERT_EQ(custom->inputs().size(), registry.inputs().size());
  for (size_t i = 0; i < custom->inputs().size(); ++i) {
    ASSERT_EQ(custom->inputs()[i].shape(), registry.inputs()[i].shape());
  }
  std::vector<TensorData> inputs = RandomInputs(registry, 7);
  std::vector<TensorData> a = *RunReference(*custom, inputs);
  std::vector<TensorData> b = *RunReference(registry, inputs);
  EXPECT_THAT(a[0].values, Pointwise(DoubleNear(1e-5), b[0].values));
}

TEST(Reference, CustomMatchesRegistryOperators) {
  ExpectSameResults("C[i,j] += A[i,k] * B[k,j]", "i=5,j=7,k=3",
                    "matmul:M=5,N=7,K=3");
  ExpectSameResults("C[b,i,j] += A[b,i,k] * B[b,k,j]", "b=2,i=3,j=4,k=5",
                    "batch_matmul:B=2,M=3,N=4,K=5");
  ExpectSameResults("D[i,j] += X[i,k] * W[j,k]; Y[i,j] = max(D[i,j] + b[j], 0)",
                    "i=4,j=6,k=5", "dense:M=4,N=6,K=5,bias=1,relu=1");
  ExpectSameResults("Y[n,k,p,q] += X[n,c,2*p+r,2*q+s] * W[k,c,r,s]",
                    "n=1,k=3,p=3,q=2,c=2,r=3,s=2",
                    "conv2d_nchw:N=1,C=2,H=7,W=4,K=3,R=3,S=2,stride=2");
  ExpectSameResults("Y[n,c,p,q] max= X[n,c,2*p+r,2*q+s]",
                    "n=1,c=2,p=3,q=3,r=2,s=2",
                    "max_pool2d:N=1,C=2,H=6,W=6,R=2,S=2,stride=2");
  ExpectSameResults(
      "M[i] max= X[i,k]; S[i] += exp(X[i,k] - M[i]); Y[i,j] = exp(X[i,j] - "
      "M[i]) / S[i]",
      "i=3,j=5,k=5", "softmax:M=3,N=5");
  ExpectSameResults("C[i,j] = A[i,j] + B[i,j]", "i=2,j=3", "add:M=2,N=3");
  ExpectSameResults("Y[i,j] = max(X[i,j], 0.0)", "i=2,j=3", "relu:M=2,N=3");
}

TEST(Reference, CustomPaddedReadsMatchRegistryPadding) {
  ExpectSameResults(
      "input X[1,3,6,5]; input W[4,3,3,3]; "
      "Y[n,k,p,q] += X?[n,c,2*p+r-1,2*q+s-1] * W[k,c,r,s]",
      "n=1,k=4,p=3,q=3,c=3,r=3,s=3",
      "conv2d_nchw:N=1,C=3,H=6,W=5,K=4,R=3,S=3,stride=2,pad=1");
  ExpectSameResults(
      "input X[2,2,5,7] pad -3.4028234663852886e+38; "
      "Y[n,c,p,q] max= X?[n,c,2*p+r-1,2*q+s-1]",
      "n=2,c=2,p=3,q=4,r=3,s=3",
      "max_pool2d:N=2,C=2,H=5,W=7,R=3,S=3,stride=2,pad=1");
}

TEST(Reference, CustomPaddedReadsGiveThePadValueOutside) {
  Workload w = *ParseCustomWorkload(
      "input X[3] pad 7; input Z[2,2]; Y[i] = X?[i-1] + Z?[i-2,1-i] * 100",
      "i=5");
  // X?[i-1]: 7, 1, 2, 3, 7. Z?[i-2,1-i] is outside Z at every i (its row
  // needs i >= 2, its column i <= 1): the zero pad.
  std::vector<TensorData> out =
      *RunReference(w, {Iota({3}), Tensor({2, 2}, {5, 6, 7, 8})});
  EXPECT_THAT(out[0].values, ElementsAre(7, 1, 2, 3, 7));
  Workload diag =
      *ParseCustomWorkload("input Z[2,2] pad -1; Y[i] = Z?[i-1,i-1]", "i=4");
  EXPECT_THAT((*RunReference(diag, {Tensor({2, 2}, {5, 6, 7, 8})}))[0].values,
              ElementsAre(-1, 5, 8, -1));
}

TEST(Reference, CustomSelectComparisonsErfPow) {
  Workload w = *ParseCustomWorkload(
      "Y[i] = select(A[i], erf(A[i]), pow(2, 3)) + lt(A[i], 0) * 10 + "
      "le(A[i], 0) * 100 + gt(A[i], 0) * 1000 + ge(A[i], 0) * 10000 + "
      "eq(A[i], 0) * 100000",
      "i=3");
  std::vector<TensorData> out = *RunReference(w, {Tensor({3}, {0, -1, 0.5})});
  // 0: 8 + 100 + 10000 + 100000; -1: erf(-1) + 10 + 100; 0.5: erf(0.5) +
  // 1000 + 10000.
  EXPECT_THAT(out[0].values,
              ElementsAre(DoubleNear(110108, 1e-3),
                          DoubleNear(110 - 0.8427007929497149, 1e-4),
                          DoubleNear(11000.520499877813, 1e-3)));
}

TEST(Reference, CustomEvaluatesEveryConstruct) {
  // One element per construct, checked by hand.
  Workload w = *ParseCustomWorkload(
      "T[i] = -A[i] * 2 - (1 - A[i]) / 4; U[i] min= T[i] + B[i,j]; "
      "V[i] = abs(U[i]) + sqrt(4) + log(exp(1)) + tanh(0) + min(U[i], 100)",
      "i=2,j=3");
  std::vector<TensorData> out = *RunReference(
      w, {Tensor({2}, {1, -2}), Tensor({2, 3}, {5, -1, 3, 0, 0, -7})});
  // T = [-2, 4 - 0.75] = [-2, 3.25]; U = [-3, -3.75];
  // V = |U| + 2 + 1 + 0 + U = 3.
  EXPECT_THAT(out[0].values,
              ElementsAre(DoubleNear(3, 1e-6), DoubleNear(3, 1e-6)));
}

TEST(Reference, CustomShiftedIndicesReadTheRightElements) {
  // A 1-d convolution: Y[i] = sum_k X[i+k] * K[k]; X has i+k-1 = 6 elements.
  Workload w = *ParseCustomWorkload("Y[i] += X[i+k] * K[k]", "i=4,k=3");
  ASSERT_EQ(w.inputs()[0].shape(), (std::vector<int64_t>{6}));
  std::vector<TensorData> out =
      *RunReference(w, {Iota({6}), Tensor({3}, {1, 0, -1})});
  EXPECT_THAT(out[0].values, ElementsAre(-2, -2, -2, -2));
  // Reversed: X[3-i] with i=4 reads 3, 2, 1, 0.
  Workload rev = *ParseCustomWorkload("Y[i] = X[3-i]", "i=4");
  EXPECT_THAT((*RunReference(rev, {Iota({4})}))[0].values,
              ElementsAre(4, 3, 2, 1));
}

}  // namespace
}  // namespace lathe
