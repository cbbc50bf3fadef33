#include "compiler/arith/index_span.h"

#include <gtest/gtest.h>

#include <optional>

#include "compiler/ir/buffer.h"

namespace lathe {
namespace {

struct Vars {
  Expr outer = Var("o"), a = Var("a"), b = Var("b");
  VarRanges fixed, varying;
  Vars() {
    fixed[outer.get()] = Interval::Extent(5);
    varying[a.get()] = Interval::Extent(4);
    varying[b.get()] = Interval::Extent(3);
  }
};

TEST(IndexSpan, LinearTermsAddTheirWidths) {
  Vars v;
  absl::StatusOr<IndexSpan> s =
      SpanOfIndex(v.outer * 12 + v.a * 3 + v.b, v.varying, v.fixed);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->min.ToString(), "o * 12");
  EXPECT_EQ(s->width, 11);
  EXPECT_TRUE(s->exact);
  EXPECT_EQ(s->varying_vars.size(), 2u);
  // A negative coefficient starts at the top of the range; steps of 4 over a
  // variable of 3 values leave gaps.
  s = SpanOfIndex(v.outer - v.a * 4 + v.b, v.varying, v.fixed);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->min.ToString(), "o - 12");
  EXPECT_EQ(s->width, 14);
  EXPECT_FALSE(s->exact);
}

TEST(IndexSpan, FloorDivAndModFromTheirArgument) {
  Vars v;
  absl::StatusOr<IndexSpan> s =
      SpanOfIndex(FloorDiv(v.outer * 4 + v.a, 2), v.varying, v.fixed);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->min.ToString(), "o * 2");
  EXPECT_EQ(s->width, 1);
  s = SpanOfIndex(FloorMod(v.a, 8), v.varying, v.fixed);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->min.ToString(), "0");
  EXPECT_EQ(s->width, 3);
  s = SpanOfIndex(FloorMod(v.a + v.b, 2), v.varying, v.fixed);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->width, 1);
}

TEST(IndexSpan, RejectsWhatItCannotBound) {
  Vars v;
  absl::StatusOr<IndexSpan> s = SpanOfIndex(v.outer * v.a, v.varying, v.fixed);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.status().message(), "cannot infer the region of index o * a");
  s = SpanOfIndex(Min(v.a, v.outer), v.varying, v.fixed);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  // A term of fixed variables only is kept whatever it is.
  BufferPtr t = MakeBuffer("T", DType::Index(), {5});
  s = SpanOfIndex(Load(t, {v.outer}) + v.a, v.varying, v.fixed);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->width, 3);
}

TEST(JoinSpans, CoversBothWhenTheirMinsDifferByABoundedAmount) {
  Vars v;
  IndexSpan a{v.outer * 4, 3, true, {}};
  IndexSpan b{v.outer * 4 + 2, 3, true, {}};
  std::optional<IndexSpan> j =
      JoinSpans(a, b, v.fixed, JoinedMin::kSecondWhenConstantlyBelow);
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(j->min.ToString(), "o * 4");
  EXPECT_EQ(j->width, 5);
  EXPECT_FALSE(j->exact);
  j = JoinSpans(a, a, v.fixed, JoinedMin::kFirstMovedDown);
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(j->width, 3);
  EXPECT_TRUE(j->exact);
  // b a constant below a: b's min, or a's moved down.
  j = JoinSpans(b, a, v.fixed, JoinedMin::kSecondWhenConstantlyBelow);
  ASSERT_TRUE(j.has_value());
  EXPECT_TRUE(j->min.same_as(a.min));
  EXPECT_EQ(j->width, 5);
  j = JoinSpans(b, a, v.fixed, JoinedMin::kFirstMovedDown);
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(j->min.ToString(), "o * 4");
  // Mins o and 2 differ by o - 2 in [-2, 2].
  j = JoinSpans({v.outer, 0, true, {}}, {IntImm(2), 0, true, {}}, v.fixed,
                JoinedMin::kSecondWhenConstantlyBelow);
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(j->min.ToString(), "o - 2");
  EXPECT_EQ(j->width, 4);
  EXPECT_FALSE(JoinSpans({v.outer, 0, true, {}}, {Var("free"), 0, true, {}},
                         v.fixed, JoinedMin::kFirstMovedDown)
                   .has_value());
}

}  // namespace
}  // namespace lathe
