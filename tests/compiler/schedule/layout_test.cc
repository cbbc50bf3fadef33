#include "compiler/schedule/layout.h"

#include <gtest/gtest.h>

namespace lathe {
namespace {

TEST(Layout, PackingShapeAndIndices) {
  Layout packed{{1, 16}, {1, 0, 2}};
  EXPECT_EQ(LayoutShape(packed, {64, 40}).value(),
            (std::vector<int64_t>{3, 64, 16}));
  Expr k = Var("k"), n = Var("n");
  std::vector<Expr> idx = LayoutIndices(packed, {k, n});
  ASSERT_EQ(idx.size(), 3u);
  EXPECT_EQ(idx[0].ToString(), "n // 16");
  EXPECT_EQ(idx[1].ToString(), "k");
  EXPECT_EQ(idx[2].ToString(), "n % 16");
}

TEST(Layout, RejectsMismatchedRank) {
  EXPECT_FALSE(LayoutShape({{1, 2, 4}, {}}, {4, 4}).ok());
  EXPECT_FALSE(LayoutShape({{1, 4}, {0, 1}}, {4, 4}).ok());
  EXPECT_FALSE(LayoutShape({{1, 4}, {0, 0, 1}}, {4, 4}).ok());
  EXPECT_FALSE(LayoutShape({{0, 4}, {}}, {4, 4}).ok());
  EXPECT_EQ(LayoutShape({}, {4, 5}).value(), (std::vector<int64_t>{4, 5}));
}

// A split pads its dimension at most to twice its extent or 64 past it
// (padding_limit.h); a split so large that rounding up overflowed used to
// give a dimension of 0 elements.
TEST(Layout, RefusesSplitsThatPadFarPastTheExtent) {
  EXPECT_EQ(LayoutShape({{1, 16}, {}}, {64, 8}).value(),
            (std::vector<int64_t>{64, 1, 16}));
  EXPECT_EQ(LayoutShape({{1, 72}, {}}, {64, 8}).value(),
            (std::vector<int64_t>{64, 1, 72}));
  for (int64_t split : {int64_t{73}, int64_t{1} << 40, INT64_MAX}) {
    absl::StatusOr<std::vector<int64_t>> shape =
        LayoutShape({{1, split}, {}}, {64, 8});
    ASSERT_FALSE(shape.ok()) << split;
    EXPECT_NE(shape.status().message().find(
                  "of dimension 1 (extent 8) pads it past 72"),
              std::string::npos)
        << shape.status();
  }
}

}  // namespace
}  // namespace lathe
