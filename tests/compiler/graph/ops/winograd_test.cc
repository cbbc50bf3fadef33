// WinogradInputTransform and WinogradOutputTransform: around a batched
// product with the transformed weights they compute the 3x3 convolution
// (F(2x2, 3x3), written out here as the reference), and they refuse tables
// and inputs of the wrong shape.
#include "compiler/interp/random_fill.h"
#include "gtest/gtest.h"
#include "tests/compiler/graph/ops/op_check.h"

namespace lathe::graph {
namespace {

using namespace testing;  // NOLINT
using Ints64 = std::vector<int64_t>;

TensorData Random(Ints64 shape, uint64_t seed) {
  TensorData t(DType::Float32(), std::move(shape));
  FillRandom(&t, seed);
  return t;
}

const double kBt[4][4] = {
    {1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
const double kG[4][3] = {
    {1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
const double kAt[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};

// T[r,s,i,j] = M[r,i] M[s,j].
TensorData ProductTable(const double* m, int64_t rows) {
  TensorData t(DType::Float32(), {rows, rows, 4, 4});
  size_t flat = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t s = 0; s < rows; ++s) {
      for (int64_t i = 0; i < 4; ++i) {
        for (int64_t j = 0; j < 4; ++j)
          t.values[flat++] = m[r * 4 + i] * m[s * 4 + j];
      }
    }
  }
  return t;
}

TEST(Winograd, TransformsAroundTheProductsComputeTheConvolution) {
  const int64_t n = 2, c = 3, k = 4, h = 6, w = 4;
  TensorData x = Random({n, c, h, w}, 1);
  TensorData g = Random({k, c, 3, 3}, 2);
  TensorData bias = Random({k}, 3);
  OpRun input =
      RunOp("WinogradInputTransform", {x, ProductTable(&kBt[0][0], 4)});
  ASSERT_TRUE(input.types.ok()) << input.types.status();
  EXPECT_EQ(TensorTypeText((*input.types)[0]),
            TensorTypeText(F32({4, 4, c, n, h / 2, w / 2})));
  ASSERT_TRUE(input.outputs.ok()) << input.outputs.status();
  const TensorData& v = (*input.outputs)[0];
  // The 16 products M[p,q] = U[p,q] V[p,q], U = G g G^T.
  const int64_t tiles = n * (h / 2) * (w / 2);
  TensorData m(DType::Float32(), {4, 4, k, n, h / 2, w / 2});
  for (int64_t p = 0; p < 4; ++p) {
    for (int64_t q = 0; q < 4; ++q) {
      for (int64_t kk = 0; kk < k; ++kk) {
        for (int64_t cc = 0; cc < c; ++cc) {
          double u = 0;
          for (int r = 0; r < 3; ++r) {
            for (int s = 0; s < 3; ++s) {
              u += kG[p][r] * g.values[((kk * c + cc) * 3 + r) * 3 + s] *
                   kG[q][s];
            }
          }
          for (int64_t t = 0; t < tiles; ++t) {
            m.values[((p * 4 + q) * k + kk) * tiles + t] +=
                u * v.values[((p * 4 + q) * c + cc) * tiles + t];
          }
        }
      }
    }
  }
  OpRun output =
      RunOp("WinogradOutputTransform", {m, ProductTable(&kAt[0][0], 2), bias});
  ASSERT_TRUE(output.types.ok()) << output.types.status();
  EXPECT_EQ(TensorTypeText((*output.types)[0]),
            TensorTypeText(F32({n, k, h / 2, 2, w / 2, 2})));
  ASSERT_TRUE(output.outputs.ok()) << output.outputs.status();
  OpRun conv = RunOp("Conv", {x, g, bias}, {{"pads", Ints64{1, 1, 1, 1}}});
  ASSERT_TRUE(conv.outputs.ok()) << conv.outputs.status();
  const TensorData& want = (*conv.outputs)[0];
  const TensorData& got = (*output.outputs)[0];
  ASSERT_EQ(got.values.size(), want.values.size());
  // [N, K, H/2, 2, W/2, 2] is [N, K, H, W] element for element.
  for (size_t i = 0; i < got.values.size(); ++i) {
    EXPECT_NEAR(got.values[i], want.values[i], 1e-4) << i;
  }
}

TEST(Winograd, InputTransformPadsTheLastTileOfAnOddExtent) {
  // One channel of ones, 3 wide: tile columns x = 0 (reads -1..2) and x = 1
  // (reads 1..4, of which 3 and 4 are outside). With the identity table,
  // V[p,q,0,0,0,x] is the input at (p - 1, 2x + q - 1), zero outside.
  const double identity[4][4] = {
      {1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}};
  TensorData id = ProductTable(&identity[0][0], 4);
  TensorData ones(DType::Float32(), {1, 1, 2, 3});
  for (double& value : ones.values) value = 1;
  OpRun run = RunOp("WinogradInputTransform", {ones, id});
  ASSERT_TRUE(run.outputs.ok()) << run.outputs.status();
  const TensorData& v = (*run.outputs)[0];
  EXPECT_EQ(v.shape, (Ints64{4, 4, 1, 1, 1, 2}));
  for (int64_t p = 0; p < 4; ++p) {
    for (int64_t q = 0; q < 4; ++q) {
      for (int64_t x = 0; x < 2; ++x) {
        const int64_t row = p - 1, col = 2 * x + q - 1;
        const double want = row >= 0 && row < 2 && col >= 0 && col < 3;
        EXPECT_EQ(v.values[(p * 4 + q) * 2 + x], want) << p << q << x;
      }
    }
  }
}

TEST(Winograd, RefusesTablesAndInputsOfTheWrongShape) {
  auto error = [](const OpRun& run) {
    return run.types.ok() ? std::string() : run.types.status().ToString();
  };
  EXPECT_NE(error(RunOp("WinogradInputTransform",
                        {Random({1, 2, 4, 4}, 1), Random({4, 4, 4, 3}, 2)}))
                .find("table f32[4,4,4,3] must be [a,a,a,a]"),
            std::string::npos);
  EXPECT_NE(error(RunOp("WinogradInputTransform",
                        {Random({2, 4, 4}, 1), Random({4, 4, 4, 4}, 2)}))
                .find("input rank 3 must be 4"),
            std::string::npos);
  EXPECT_NE(
      error(RunOp("WinogradOutputTransform",
                  {Random({4, 4, 2, 1, 2, 2}, 1), Random({4, 4, 4, 4}, 2)}))
          .find("must be [a-2,a-2,a,a]"),
      std::string::npos);
  EXPECT_NE(
      error(RunOp("WinogradOutputTransform",
                  {Random({4, 3, 2, 1, 2, 2}, 1), Random({2, 2, 4, 4}, 2)}))
          .find("must be [4,4,K,N,Th,Tw]"),
      std::string::npos);
  EXPECT_NE(error(RunOp("WinogradOutputTransform",
                        {Random({4, 4, 2, 1, 2, 2}, 1), Random({2, 2, 4, 4}, 2),
                         Random({3}, 3)}))
                .find("bias must be [2]"),
            std::string::npos);
}

}  // namespace
}  // namespace lathe::graph
