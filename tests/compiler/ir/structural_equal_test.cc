#include "compiler/ir/structural_equal.h"

#include <gtest/gtest.h>

#include "compiler/te/tensor.h"

namespace lathe {
namespace {

Program Scale(int64_t n, double factor) {
  te::Tensor x = te::Placeholder("X", {n});
  te::Tensor y = te::Compute("Y", {n}, {"i"}, [&](const std::vector<Expr>& ax) {
    return x({ax[0]}) * factor;
  });
  return te::CreateProgram("scale", {x}, {y}).value();
}

TEST(StructuralEqual, IndependentBuildsAreEqual) {
  Program a = Scale(16, 2.0), b = Scale(16, 2.0);
  EXPECT_TRUE(StructuralEqual(a, b));
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
}

TEST(StructuralEqual, DetectsDifferences) {
  EXPECT_FALSE(StructuralEqual(Scale(16, 2.0), Scale(17, 2.0)));
  EXPECT_FALSE(StructuralEqual(Scale(16, 2.0), Scale(16, 2.5)));
  Program c = Scale(16, 2.0);
  c.FindLoop("i")->for_kind = ForKind::kParallel;
  EXPECT_FALSE(StructuralEqual(Scale(16, 2.0), c));
}

TEST(StructuralEqual, IgnoresNames) {
  Program a = Scale(16, 2.0);
  Program b = Scale(16, 2.0);
  b.FindBlock("Y")->name = "other";
  EXPECT_TRUE(StructuralEqual(a, b));
}

TEST(StructuralEqual, CopyIsDeepAndEqual) {
  Program a = Scale(8, 3.0);
  Program b = a;
  EXPECT_TRUE(StructuralEqual(a, b));
  b.FindLoop("i")->extent = 4;
  EXPECT_EQ(a.FindLoop("i")->extent, 8);
}

TEST(StructuralHash, GoldenValueIsStable) {
  // The hash is persisted in databases: it must not change across runs,
  // processes or machines. Update only with a format change.
  EXPECT_EQ(StableHash64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(StableHash64("lathe"), 0x9ed611ec38263585ULL);
}

}  // namespace
}  // namespace lathe
