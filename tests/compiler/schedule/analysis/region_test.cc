#include "compiler/schedule/analysis/region.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/schedule/analysis/stmt_index.h"
#include "compiler/schedule/primitive/split.h"
#include "tests/compiler/schedule/test_programs.h"

namespace lathe {
namespace {

// Loop variables with ranges: `outer` fixed, the others varying.
struct Vars {
  Expr outer = Var("o");
  Expr a = Var("a");
  Expr b = Var("b");
  VarRanges fixed{{outer.get(), Interval::Extent(5)}};
  VarRanges varying{{a.get(), Interval::Extent(4)},
                    {b.get(), Interval::Extent(3)}};
};

std::string Show(const Region& r) {
  std::string s;
  for (const RegionDim& d : r.dims) {
    s += "[" + d.min.ToString() + ", +" + std::to_string(d.extent) + ")";
  }
  return s + (r.exact ? " exact" : " cover");
}

TEST(IndexRegion, LinearInTheVaryingLoops) {
  Vars v;
  auto r = IndexRegion({v.outer * 4 + v.a + 2}, v.varying, v.fixed);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Show(*r), "[o * 4 + 2, +4) exact");
  // A negative coefficient starts at the top of the range.
  r = IndexRegion({IntImm(10) - v.a}, v.varying, v.fixed);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Show(*r), "[7, +4) exact");
  // b * 4 + a covers 0..11 without holes; b * 5 + a has holes.
  r = IndexRegion({v.b * 4 + v.a}, v.varying, v.fixed);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Show(*r), "[0, +12) exact");
  r = IndexRegion({v.b * 5 + v.a}, v.varying, v.fixed);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Show(*r), "[0, +14) cover");
}

TEST(IndexRegion, DimensionsMovedTogetherAreNotExact) {
  Vars v;
  auto r = IndexRegion({v.a, v.b}, v.varying, v.fixed);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Show(*r), "[0, +4)[0, +3) exact");
  r = IndexRegion({v.a, v.a + 1}, v.varying, v.fixed);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Show(*r), "[0, +4)[1, +4) cover");  // the diagonal only
}

TEST(IndexRegion, FloorDivAndModOfMixedArguments) {
  Vars v;
  // (o * 4 + a) // 2: a multiple of 2 plus 0..3 gives two values.
  auto r = IndexRegion({FloorDiv(v.outer * 4 + v.a, 2)}, v.varying, v.fixed);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Show(*r), "[o * 2, +2) exact");
  // (o * 3 + a) // 2: the remainder of o * 3 is unknown, so up to 3 values.
  r = IndexRegion({FloorDiv(v.outer * 3 + v.a, 2)}, v.varying, v.fixed);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->dims[0].extent, 3);
  EXPECT_FALSE(r->exact);
  // (o * 4 + a) % 8 may wrap: the whole period.
  r = IndexRegion({FloorMod(v.outer * 4 + v.a, 8)}, v.varying, v.fixed);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Show(*r), "[0, +8) cover");
  // Of varying loops only: exact too.
  r = IndexRegion({v.outer + FloorDiv(v.a, 2), FloorMod(v.b, 2)}, v.varying,
                  v.fixed);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Show(*r), "[o, +2)[0, +2) exact");
  // Terms that move together: a % 2 + a // 2 takes only 0 and 1 for a < 3.
  Vars w;
  w.varying[w.a.get()] = Interval::Extent(3);
  r = IndexRegion({FloorMod(w.a, 2) + FloorDiv(w.a, 2)}, w.varying, w.fixed);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Show(*r), "[0, +3) cover");
  // Other atoms of varying loops only are bounded by BoundOf.
  r = IndexRegion({Max(v.a, v.b)}, v.varying, v.fixed);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Show(*r), "[0, +4) cover");
}

TEST(IndexRegion, RejectsWhatItCannotBound) {
  Vars v;
  auto r = IndexRegion({Min(v.outer, v.a)}, v.varying, v.fixed);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(
      r.status().message().find("cannot infer the region of index min(o, a)"),
      std::string::npos)
      << r.status();
  r = IndexRegion({Var("stranger") + v.a}, v.varying, v.fixed);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  r = IndexRegion({v.outer * v.a}, v.varying, v.fixed);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(BlockRegionUnderLoop, StencilReadsTheTileAndItsHalo) {
  Program p = testing::PadStencilProgram(13);
  ASSERT_TRUE(primitive::Split(&p, "i_1", {std::nullopt, 4}).ok());
  const BlockNode& b = *p.FindBlock("B");
  const Buffer* pad = p.root->alloc_buffers[0].get();
  auto tile =
      BlockRegionUnderLoop(p, b, p.FindLoop("i_1_0"), pad, AccessKind::kRead);
  ASSERT_TRUE(tile.ok()) << tile.status();
  EXPECT_EQ(Show(*tile), "[i_1_0 * 4, +6) cover");
  auto one =
      BlockRegionUnderLoop(p, b, p.FindLoop("i_1_1"), pad, AccessKind::kRead);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(Show(*one), "[i_1_0 * 4 + i_1_1, +3) cover");
  // All loops varying: the predicate is ignored, so 16 + 2 elements.
  auto all = BlockRegionUnderLoop(p, b, nullptr, pad, AccessKind::kRead);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(Show(*all), "[0, +18) cover");
  // The write of B itself is exact.
  auto write = BlockRegionUnderLoop(p, b, p.FindLoop("i_1_0"),
                                    p.outputs[0].get(), AccessKind::kWrite);
  ASSERT_TRUE(write.ok()) << write.status();
  EXPECT_EQ(Show(*write), "[i_1_0 * 4, +4) exact");
  // A buffer it does not read, a loop that is not above it.
  EXPECT_EQ(
      BlockRegionUnderLoop(p, b, nullptr, p.inputs[0].get(), AccessKind::kRead)
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BlockRegionUnderLoop(p, b, p.FindLoop("i"), pad, AccessKind::kRead)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(IndicesRegionUnderLoop, LoopsLookedUpInAnIndexGiveTheSameRegion) {
  Program p = testing::PadStencilProgram(13);
  ASSERT_TRUE(primitive::Split(&p, "i_1", {std::nullopt, 4}).ok());
  const BlockNode& b = *p.FindBlock("B");
  StmtIndex index(p);
  std::vector<Expr> indices;
  for (const IterVar& iv : b.iter_vars) indices.push_back(iv.var + 1);
  for (const ForNode* loop : {p.FindLoop("i_1_0"), p.FindLoop("i_1_1"),
                              static_cast<ForNode*>(nullptr)}) {
    auto from_program = IndicesRegionUnderLoop(p, b, loop, indices);
    auto from_index = IndicesRegionUnderLoop(
        b, loop, index.LoopsAbove(&b), index.LoopRangesAbove(&b), indices);
    ASSERT_TRUE(from_program.ok()) << from_program.status();
    ASSERT_TRUE(from_index.ok()) << from_index.status();
    EXPECT_EQ(Show(*from_index), Show(*from_program));
  }
  // A loop that is not above the block: the same error.
  Program other = testing::MatmulProgram(2, 2, 2);
  auto refused =
      IndicesRegionUnderLoop(b, other.FindLoop("i"), index.LoopsAbove(&b),
                             index.LoopRangesAbove(&b), indices);
  EXPECT_EQ(
      refused.status(),
      IndicesRegionUnderLoop(p, b, other.FindLoop("i"), indices).status());
}

TEST(UnionRegions, ConstantAndBoundedOffsets) {
  Vars v;
  Region a{{{v.outer * 4, 4}}, true};
  Region b{{{v.outer * 4 + 2, 4}}, true};
  auto u = UnionRegions(a, b, v.fixed);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(Show(*u), "[o * 4, +6) cover");
  u = UnionRegions(b, a, v.fixed);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(Show(*u), "[o * 4, +6) cover");
  u = UnionRegions(a, a, v.fixed);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(Show(*u), "[o * 4, +4) exact");
  // Mins o and 2: they differ by o - 2 in [-2, 2].
  Region c{{{v.outer, 1}}, true};
  Region d{{{IntImm(2), 1}}, true};
  u = UnionRegions(c, d, v.fixed);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(Show(*u), "[o - 2, +5) cover");
  Expr free = Var("free");
  Region e{{{free, 1}}, true};
  EXPECT_EQ(UnionRegions(c, e, v.fixed).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace lathe
