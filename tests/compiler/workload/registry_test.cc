#include "compiler/workload/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lathe {
namespace {

using ::testing::HasSubstr;

TEST(Registry, ListsEveryOperatorSortedByName) {
  std::vector<std::string> names;
  for (const OperatorDef& op : Operators()) names.push_back(op.name);
  EXPECT_EQ(names, (std::vector<std::string>{"add", "avg_pool2d",
                                             "batch_matmul", "conv2d_nchw",
                                             "conv2d_nhwc", "dense", "matmul",
                                             "max_pool2d", "relu", "softmax"}));
  EXPECT_EQ(OperatorNames(),
            "add, avg_pool2d, batch_matmul, conv2d_nchw, conv2d_nhwc, dense, "
            "matmul, max_pool2d, relu, softmax");
}

TEST(Registry, EveryOperatorIsCompleteAndTakesDtype) {
  for (const OperatorDef& op : Operators()) {
    SCOPED_TRACE(op.name);
    EXPECT_FALSE(op.summary.empty());
    EXPECT_TRUE(op.build);
    EXPECT_TRUE(op.reference);
    const ParamSpec* dtype = op.FindParam("dtype");
    ASSERT_NE(dtype, nullptr);
    EXPECT_EQ(dtype->default_value, "float32");
    for (const ParamSpec& p : op.params) {
      EXPECT_FALSE(p.description.empty()) << p.name;
    }
  }
}

TEST(Registry, FindsByExactNameOnly) {
  EXPECT_NE(FindOperator("matmul"), nullptr);
  EXPECT_EQ(FindOperator("Matmul"), nullptr);
  EXPECT_EQ(FindOperator("custom"), nullptr);
  EXPECT_EQ(FindOperator(""), nullptr);
}

TEST(Registry, ConvDeclaresDesignDefaults) {
  const OperatorDef* conv = FindOperator("conv2d_nchw");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->ParamNames(),
            "N, C, H, W, K, R, S, stride, pad, dilation, groups, dtype");
  EXPECT_EQ(conv->FindParam("stride")->default_value, "1");
  EXPECT_EQ(conv->FindParam("pad")->default_value, "0");
  EXPECT_EQ(conv->FindParam("dilation")->default_value, "1");
  EXPECT_EQ(conv->FindParam("groups")->default_value, "1");
  EXPECT_TRUE(conv->FindParam("N")->required());
}

TEST(CanonicalParamValue, NormalizesIntegersAndDtypes) {
  const OperatorDef& op = *FindOperator("conv2d_nchw");
  EXPECT_EQ(*CanonicalParamValue(op, *op.FindParam("C"), "0064"), "64");
  EXPECT_EQ(*CanonicalParamValue(op, *op.FindParam("C"), "+3"), "3");
  EXPECT_EQ(*CanonicalParamValue(op, *op.FindParam("pad"), "0"), "0");
  EXPECT_EQ(*CanonicalParamValue(op, *op.FindParam("dtype"), "f32"), "float32");
  EXPECT_EQ(*CanonicalParamValue(op, *op.FindParam("C"), "2147483648"),
            "2147483648");
}

TEST(CanonicalParamValue, RejectsValuesOfTheWrongKind) {
  const OperatorDef& op = *FindOperator("dense");
  auto error = [&](const char* param, const char* value) {
    absl::StatusOr<std::string> r =
        CanonicalParamValue(op, *op.FindParam(param), value);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(r.status().message());
  };
  EXPECT_EQ(error("M", "0"), "dense: M must be a positive integer, got \"0\"");
  EXPECT_EQ(error("M", "-4"),
            "dense: M must be a positive integer, got \"-4\"");
  EXPECT_EQ(error("M", "1.5"),
            "dense: M must be a positive integer, got \"1.5\"");
  EXPECT_EQ(error("M", "1e3"),
            "dense: M must be a positive integer, got \"1e3\"");
  EXPECT_EQ(error("M", ""), "dense: M must be a positive integer, got \"\"");
  EXPECT_EQ(error("bias", "2"), "dense: bias must be 0 or 1, got \"2\"");
  EXPECT_THAT(error("M", "2147483649"), HasSubstr("too large"));
  EXPECT_THAT(error("M", "99999999999999999999999"), HasSubstr("too large"));
  EXPECT_EQ(error("dtype", "float16"),
            "dense: dtype float16 is not supported yet; accepted: float32");
  EXPECT_EQ(error("dtype", "double"),
            "dense: unknown dtype \"double\"; accepted: float32");
}

TEST(CheckedNumElements, BoundsWithoutOverflow) {
  EXPECT_EQ(*CheckedNumElements("t", {2, 3, 4}), 24);
  EXPECT_EQ(*CheckedNumElements("t", {int64_t{1} << 31}), int64_t{1} << 31);
  EXPECT_FALSE(CheckedNumElements("t", {int64_t{1} << 31, 2}).ok());
  EXPECT_FALSE(
      CheckedNumElements("t", {int64_t{1} << 40, int64_t{1} << 40}).ok());
  EXPECT_FALSE(CheckedNumElements("t", {4, 0}).ok());
}

}  // namespace
}  // namespace lathe
