// Transpose, the views (Reshape, Flatten, Squeeze, Unsqueeze, Identity,
// Dropout), Concat, Split, Slice, Gather, Pad, Expand and the constant
// makers (Constant, ConstantOfShape, Shape, Size).
#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "tests/compiler/graph/ops/op_check.h"

namespace lathe::graph {
namespace {

using namespace testing;  // NOLINT
using Ints64 = std::vector<int64_t>;

TensorData Iota(std::vector<int64_t> shape) {
  TensorData t(DType::Float32(), std::move(shape));
  for (size_t i = 0; i < t.values.size(); ++i) t.values[i] = double(i);
  return t;
}

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(Transpose, PermutesAxes) {
  ExpectOutput(RunOp("Transpose", {Iota({2, 3})}), F32({3, 2}),
               {0, 3, 1, 4, 2, 5});
  ExpectOutput(
      RunOp("Transpose", {Iota({1, 2, 2})}, {{"perm", Ints64{2, 0, 1}}}),
      F32({2, 1, 2}), {0, 2, 1, 3});
  ExpectRefused(RunOp("Transpose", {Iota({2, 3})}, {{"perm", Ints64{0, 0}}}),
                {"Transpose_0", "perm"});
}

TEST(Views, ReshapeCopiesZeroAndInfersMinusOne) {
  ExpectOutput(RunOp("Reshape", {Iota({2, 3, 4}), Ints({0, -1})}, {}, {1}),
               F32({2, 12}), std::vector<double>(Iota({24}).values));
  ExpectRefused(RunOp("Reshape", {Iota({2, 3}), Ints({4, -1})}, {}, {1}),
                {"Reshape_0", "-1"});
  ExpectRefused(RunOp("Reshape", {Iota({2, 3}), Ints({-1, -1})}, {}, {1}),
                {"two -1"});
  ExpectRefused(RunOp("Reshape", {Iota({2, 3}), Ints({6})}),
                {"Reshape_0", "must be a constant"});
  OpRun allowzero = RunOp("Reshape", {Iota({0, 3}), Ints({3, 0})},
                          {{"allowzero", int64_t{1}}}, {1});
  ASSERT_TRUE(allowzero.types.ok()) << allowzero.types.status();
  EXPECT_EQ((*allowzero.types)[0].shape, (Ints64{3, 0}));
}

TEST(Views, FlattenSqueezeUnsqueeze) {
  TensorData x = Iota({2, 1, 3});
  ExpectOutput(RunOp("Flatten", {x}), F32({2, 3}), x.values);
  ExpectOutput(RunOp("Flatten", {x}, {{"axis", int64_t{0}}}), F32({1, 6}),
               x.values);
  ExpectOutput(RunOp("Squeeze", {x}), F32({2, 3}), x.values);
  ExpectOutput(RunOp("Squeeze", {x, Ints({-2})}, {}, {1}), F32({2, 3}),
               x.values);
  ExpectRefused(RunOp("Squeeze", {x, Ints({0})}, {}, {1}),
                {"Squeeze_0", "extent 2"});
  ExpectOutput(RunOp("Unsqueeze", {x, Ints({0, -1})}, {}, {1}),
               F32({1, 2, 1, 3, 1}), x.values);
  ExpectOutput(RunOp("Identity", {x}), F32({2, 1, 3}), x.values);
  OpRun dropout = RunOp("Dropout", {x}, {}, {}, 2);
  ExpectOutput(dropout, F32({2, 1, 3}), x.values);
  ExpectOutput(dropout, TensorType{DType::Bool(), {2, 1, 3}},
               {1, 1, 1, 1, 1, 1}, 1);
}

TEST(Concat, JoinsAlongAnAxis) {
  ExpectOutput(RunOp("Concat", {Iota({2, 1}), Floats({2, 2}, {7, 8, 9, 10})},
                     {{"axis", int64_t{-1}}}),
               F32({2, 3}), {0, 7, 8, 1, 9, 10});
  ExpectRefused(
      RunOp("Concat", {Iota({2, 1}), Iota({3, 1})}, {{"axis", int64_t{1}}}),
      {"Concat_0", "input 1 has extent 3 on axis 0"});
}

TEST(Split, EqualPiecesOrGivenSizes) {
  OpRun run = RunOp("Split", {Iota({5})}, {}, {}, 2);
  ExpectOutput(run, F32({3}), {0, 1, 2}, 0);
  ExpectOutput(run, F32({2}), {3, 4}, 1);
  OpRun sized = RunOp("Split", {Iota({2, 3}), Ints({1, 2})},
                      {{"axis", int64_t{1}}}, {1}, 2);
  ExpectOutput(sized, F32({2, 1}), {0, 3}, 0);
  ExpectOutput(sized, F32({2, 2}), {1, 2, 4, 5}, 1);
  ExpectRefused(RunOp("Split", {Iota({5}), Ints({1, 2})}, {}, {1}, 2),
                {"Split_0", "does not cut"});
}

TEST(Slice, ClampsEndsAndWalksBackwards) {
  TensorData x = Iota({6});
  ExpectOutput(RunOp("Slice", {x, Ints({1}), Ints({kMax})}, {}, {1, 2}),
               F32({5}), {1, 2, 3, 4, 5});
  ExpectOutput(
      RunOp("Slice", {x, Ints({-1}), Ints({kMin}), Ints({0}), Ints({-2})}, {},
            {1, 2, 3, 4}),
      F32({3}), {5, 3, 1});
  ExpectOutput(RunOp("Slice", {x, Ints({-100}), Ints({-4})}, {}, {1, 2}),
               F32({2}), {0, 1});
  ExpectOutput(RunOp("Slice", {x, Ints({4}), Ints({2})}, {}, {1, 2}), F32({0}),
               {});
  ExpectOutput(
      RunOp("Slice", {Iota({2, 3}), Ints({1}), Ints({kMax}), Ints({-1})}, {},
            {1, 2, 3}),
      F32({2, 2}), {1, 2, 4, 5});
  ExpectRefused(RunOp("Slice", {x, Ints({0}), Ints({1}), Ints({0}), Ints({0})},
                      {}, {1, 2, 3, 4}),
                {"Slice_0", "step 0"});
}

TEST(Gather, PicksAlongAnAxisWithNegativeIndices) {
  TensorData x = Iota({3, 2});
  ExpectOutput(RunOp("Gather", {x, Ints({2, -3})}), F32({2, 2}), {4, 5, 0, 1});
  ExpectOutput(RunOp("Gather", {x, Ints({1}, {})}, {{"axis", int64_t{1}}}),
               F32({3}), {1, 3, 5});
  OpRun out_of_range = RunOp("Gather", {x, Ints({3})});
  ASSERT_TRUE(out_of_range.types.ok());
  EXPECT_FALSE(out_of_range.outputs.ok());
  ExpectRefused(RunOp("Gather", {x, Floats({1}, {0})}), {"Gather_0", "int"});
}

TEST(GatherElements, PicksPerElement) {
  TensorData x = Floats({2, 2}, {1, 2, 3, 4});
  ExpectOutput(RunOp("GatherElements", {x, Ints({0, 0, 1, 0}, {2, 2})},
                     {{"axis", int64_t{1}}}),
               F32({2, 2}), {1, 1, 4, 3});
  ExpectOutput(RunOp("GatherElements", {x, Ints({1, -2}, {1, 2})}), F32({1, 2}),
               {3, 2});
}

TEST(GatherND, PicksSlicesByIndexTuples) {
  TensorData x = Floats({2, 2}, {1, 2, 3, 4});
  ExpectOutput(RunOp("GatherND", {x, Ints({1, 0, 0, 1}, {2, 2})}), F32({2}),
               {3, 2});
  ExpectOutput(RunOp("GatherND", {x, Ints({1, 0}, {2, 1})}), F32({2, 2}),
               {3, 4, 1, 2});
  ExpectOutput(RunOp("GatherND", {x, Ints({1, 0}, {2, 1})},
                     {{"batch_dims", int64_t{1}}}),
               F32({2}), {2, 3});
}

TEST(Scatter, ElementsAndNDWithReductions) {
  TensorData x = Floats({2, 2}, {1, 2, 3, 4});
  ExpectOutput(RunOp("ScatterElements",
                     {x, Ints({1, 0}, {1, 2}), Floats({1, 2}, {10, 20})}),
               F32({2, 2}), {1, 20, 10, 4});
  ExpectOutput(
      RunOp("ScatterND", {x, Ints({1}, {1, 1}), Floats({1, 2}, {7, 8})},
            {{"reduction", std::string("add")}}),
      F32({2, 2}), {1, 2, 10, 12});
}

TEST(OneHot, MarksTheIndexAlongTheAxis) {
  ExpectOutput(
      RunOp("OneHot", {Ints({0, -1}), Ints({3}, {}), Floats({2}, {0, 5})}, {},
            {1}),
      F32({2, 3}), {5, 0, 0, 0, 0, 5});
  ExpectOutput(RunOp("EyeLike", {TensorData(DType::Float32(), {2, 3})},
                     {{"k", int64_t{1}}}),
               F32({2, 3}), {0, 1, 0, 0, 0, 1});
}

TEST(Tile, RepeatsAlongEachAxis) {
  ExpectOutput(RunOp("Tile", {Floats({1, 2}, {1, 2}), Ints({2, 2})}, {}, {1}),
               F32({2, 4}), {1, 2, 1, 2, 1, 2, 1, 2});
}

TEST(DepthToSpace, BothModesAndTheInverse) {
  TensorData x = Iota({1, 4, 1, 1});
  ExpectOutput(RunOp("DepthToSpace", {x}, {{"blocksize", int64_t{2}}}),
               F32({1, 1, 2, 2}), {0, 1, 2, 3});
  TensorData y = Iota({1, 8, 1, 1});
  ExpectOutput(RunOp("DepthToSpace", {y}, {{"blocksize", int64_t{2}}}),
               F32({1, 2, 2, 2}), {0, 2, 4, 6, 1, 3, 5, 7});
  ExpectOutput(RunOp("DepthToSpace", {y},
                     {{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}}),
               F32({1, 2, 2, 2}), {0, 1, 2, 3, 4, 5, 6, 7});
  ExpectOutput(
      RunOp("SpaceToDepth", {Iota({1, 1, 2, 2})}, {{"blocksize", int64_t{2}}}),
      F32({1, 4, 1, 1}), {0, 1, 2, 3});
}

TEST(CumSum, InclusiveExclusiveReverse) {
  TensorData x = Floats({4}, {1, 2, 3, 4});
  ExpectOutput(RunOp("CumSum", {x, Ints({0}, {})}, {}, {1}), F32({4}),
               {1, 3, 6, 10});
  ExpectOutput(RunOp("CumSum", {x, Ints({0}, {})},
                     {{"exclusive", int64_t{1}}, {"reverse", int64_t{1}}}, {1}),
               F32({4}), {9, 7, 4, 0});
}

TEST(IsNaNIsInf, Masks) {
  TensorData x = Floats({3}, {std::nan(""), INFINITY, -INFINITY});
  const TensorType bool3{DType::Bool(), {3}};
  ExpectOutput(RunOp("IsNaN", {x}), bool3, {1, 0, 0});
  ExpectOutput(RunOp("IsInf", {x}), bool3, {0, 1, 1});
  ExpectOutput(RunOp("IsInf", {x}, {{"detect_negative", int64_t{0}}}), bool3,
               {0, 1, 0});
}

TEST(Trilu, KeepsOneTriangle) {
  TensorData x = Floats({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectOutput(RunOp("Trilu", {x}), F32({2, 3}), {1, 2, 3, 0, 5, 6});
  ExpectOutput(RunOp("Trilu", {x, Ints({1}, {})}, {{"upper", int64_t{0}}}, {1}),
               F32({2, 3}), {1, 2, 0, 4, 5, 6});
}

TEST(Pad, ConstantReflectEdgeAndCropping) {
  TensorData x = Floats({3}, {1, 2, 3});
  ExpectOutput(RunOp("Pad", {x, Ints({2, 1}), Scalar(9)}, {}, {1}), F32({6}),
               {9, 9, 1, 2, 3, 9});
  ExpectOutput(
      RunOp("Pad", {x, Ints({2, 2})}, {{"mode", std::string("reflect")}}, {1}),
      F32({7}), {3, 2, 1, 2, 3, 2, 1});
  ExpectOutput(
      RunOp("Pad", {x, Ints({1, 2})}, {{"mode", std::string("edge")}}, {1}),
      F32({6}), {1, 1, 2, 3, 3, 3});
  ExpectOutput(RunOp("Pad", {x, Ints({-1, 1})}, {}, {1}), F32({3}), {2, 3, 0});
  ExpectRefused(
      RunOp("Pad", {x, Ints({1, 1})}, {{"mode", std::string("wrap")}}, {1}),
      {"Pad_0", "mode=wrap"});
}

TEST(Expand, BroadcastsBothWays) {
  ExpectOutput(RunOp("Expand", {Floats({2, 1}, {1, 2}), Ints({1, 3})}, {}, {1}),
               F32({2, 3}), {1, 1, 1, 2, 2, 2});
}

TEST(Constants, ShapeSizeConstantOfShapeConstant) {
  TensorData x = Iota({2, 3, 4});
  const TensorType i64_2{DType::Int64(), {2}};
  ExpectOutput(RunOp("Shape", {x}), TensorType{DType::Int64(), {3}}, {2, 3, 4});
  ExpectOutput(RunOp("Shape", {x}, {{"start", int64_t{-2}}}), i64_2, {3, 4});
  ExpectOutput(RunOp("Size", {x}), TensorType{DType::Int64(), {}}, {24});
  ExpectOutput(RunOp("ConstantOfShape", {Ints({2})},
                     {{"value", 3.0}, {"to", int64_t{7}}}, {0}),
               i64_2, {3, 3});
  ExpectOutput(RunOp("Constant", {}, {{"value_ints", Ints64{5, 6}}}), i64_2,
               {5, 6});
  ExpectOutput(RunOp("Constant", {}, {{"value_float", 0.5}}), F32({}), {0.5});
  ExpectOutput(RunOp("Range", {Ints({1}, {}), Ints({8}, {}), Ints({3}, {})}, {},
                     {0, 1, 2}),
               TensorType{DType::Int64(), {3}}, {1, 4, 7});
  ExpectOutput(
      RunOp("Range", {Scalar(1), Scalar(0), Scalar(-0.5)}, {}, {0, 1, 2}),
      F32({2}), {1, 0.5});
}

}  // namespace
}  // namespace lathe::graph
