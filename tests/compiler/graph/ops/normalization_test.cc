// Softmax, LogSoftmax, LayerNormalization, BatchNormalization and the
// reductions.
#include <cmath>

#include "gtest/gtest.h"
#include "tests/compiler/graph/ops/op_check.h"

namespace lathe::graph {
namespace {

using namespace testing;  // NOLINT
using Ints64 = std::vector<int64_t>;

TEST(Softmax, AlongAnyAxis) {
  TensorData x = Floats({2, 2}, {0, 0, 0, std::log(3.0)});
  ExpectOutput(RunOp("Softmax", {x}), F32({2, 2}), {0.5, 0.5, 0.25, 0.75});
  ExpectOutput(RunOp("Softmax", {x}, {{"axis", int64_t{0}}}), F32({2, 2}),
               {0.5, 0.25, 0.5, 0.75});
  ExpectOutput(RunOp("LogSoftmax", {x}), F32({2, 2}),
               {std::log(0.5), std::log(0.5), std::log(0.25), std::log(0.75)});
  ExpectRefused(RunOp("Softmax", {x}, {{"axis", int64_t{2}}}),
                {"Softmax_0", "axis 2"});
}

TEST(LayerNormalization, NormalizesTheTrailingAxes) {
  TensorData x = Floats({2, 2}, {1, 3, 0, 4});
  OpRun run = RunOp("LayerNormalization",
                    {x, Floats({2}, {1, 2}), Floats({2}, {0, 10})},
                    {{"epsilon", 0.0}}, {}, 3);
  ExpectOutput(run, F32({2, 2}), {-1, 12, -1, 12});
  ExpectOutput(run, F32({2, 1}), {2, 2}, 1);
  ExpectOutput(run, F32({2, 1}), {1, 0.5}, 2);
}

TEST(BatchNormalization, PerChannel) {
  TensorData x = Floats({1, 2, 1, 2}, {1, 2, 3, 4});
  OpRun run = RunOp("BatchNormalization",
                    {x, Floats({2}, {1, 2}), Floats({2}, {0, 1}),
                     Floats({2}, {1, 3}), Floats({2}, {4, 1})},
                    {{"epsilon", 0.0}});
  ExpectOutput(run, F32({1, 2, 1, 2}), {0, 0.5, 1, 3});
  ExpectRefused(RunOp("BatchNormalization",
                      {x, Floats({2}, {1, 2}), Floats({2}, {0, 1}),
                       Floats({2}, {1, 3}), Floats({2}, {4, 1})},
                      {{"training_mode", int64_t{1}}}),
                {"BatchNormalization_0", "training_mode"});
}

TEST(Hardmax, MarksTheFirstLargest) {
  ExpectOutput(RunOp("Hardmax", {Floats({2, 3}, {1, 3, 3, 0, -1, -2})}),
               F32({2, 3}), {0, 1, 0, 1, 0, 0});
}

TEST(Loss, NegativeLogLikelihoodWeightsIgnoresAndReduces) {
  TensorData x = Floats({2, 3}, {-1, -2, -3, -4, -5, -6});
  TensorData weight = Floats({3}, {1, 2, 4});
  ExpectOutput(RunOp("NegativeLogLikelihoodLoss", {x, Ints({2, 1})},
                     {{"reduction", std::string("none")}}),
               F32({2}), {3, 5});
  ExpectOutput(RunOp("NegativeLogLikelihoodLoss", {x, Ints({2, 1}), weight}),
               F32({}), {(3 * 4 + 5 * 2) / 6.0});
  ExpectOutput(
      RunOp("NegativeLogLikelihoodLoss", {x, Ints({2, -1})},
            {{"reduction", std::string("sum")}, {"ignore_index", int64_t{-1}}}),
      F32({}), {3});
  OpRun bad = RunOp("NegativeLogLikelihoodLoss", {x, Ints({3, 0})});
  ASSERT_TRUE(bad.types.ok());
  EXPECT_FALSE(bad.outputs.ok());
}

TEST(Loss, SoftmaxCrossEntropyGivesTheLogSoftmaxToo) {
  TensorData x = Floats({1, 2}, {0, std::log(3.0)});
  OpRun run = RunOp("SoftmaxCrossEntropyLoss", {x, Ints({1})}, {}, {}, 2);
  ExpectOutput(run, F32({}), {-std::log(0.75)});
  ExpectOutput(run, F32({1, 2}), {std::log(0.25), std::log(0.75)}, 1);
}

TEST(ArgReduce, FirstOrLastIndexOfTheExtreme) {
  TensorData x = Floats({2, 3}, {1, 3, 3, 2, 0, 0});
  ExpectOutput(RunOp("ArgMax", {x}, {{"axis", int64_t{1}}}),
               TensorType{DType::Int64(), {2, 1}}, {1, 0});
  ExpectOutput(RunOp("ArgMax", {x},
                     {{"axis", int64_t{1}},
                      {"select_last_index", int64_t{1}},
                      {"keepdims", int64_t{0}}}),
               TensorType{DType::Int64(), {2}}, {2, 0});
  ExpectOutput(RunOp("ArgMin", {x}, {{"axis", int64_t{0}}}),
               TensorType{DType::Int64(), {1, 3}}, {0, 1, 1});
}

TEST(Reduce, AxesKeepdimsAndConstantAxesInput) {
  TensorData x = Floats({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectOutput(RunOp("ReduceSum", {x}), F32({1, 1}), {21});
  ExpectOutput(
      RunOp("ReduceSum", {x, Ints({1})}, {{"keepdims", int64_t{0}}}, {1}),
      F32({2}), {6, 15});
  ExpectOutput(RunOp("ReduceMean", {x}, {{"axes", Ints64{0}}}), F32({1, 3}),
               {2.5, 3.5, 4.5});
  ExpectOutput(
      RunOp("ReduceMax", {x}, {{"axes", Ints64{-1}}, {"keepdims", int64_t{0}}}),
      F32({2}), {3, 6});
  ExpectOutput(RunOp("ReduceMin", {x}, {{"axes", Ints64{1}}}), F32({2, 1}),
               {1, 4});
  ExpectOutput(RunOp("ReduceSum", {x, Ints({})},
                     {{"noop_with_empty_axes", int64_t{1}}}, {1}),
               F32({2, 3}), {1, 2, 3, 4, 5, 6});
  ExpectRefused(RunOp("ReduceSum", {x, Ints({1})}),
                {"ReduceSum_0", "constant"});
}

}  // namespace
}  // namespace lathe::graph
