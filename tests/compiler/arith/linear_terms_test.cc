#include "compiler/arith/linear_terms.h"

#include <gtest/gtest.h>

#include <limits>

namespace lathe {
namespace {

TEST(LinearTerms, ExpandsSumsAndConstantProducts) {
  Expr i = Var("i"), j = Var("j");
  LinearTerms t;
  CollectLinearTerms((i * 4 + j - 3) * 2 - FloorDiv(j, 2), 1, &t);
  ASSERT_EQ(t.terms.size(), 3u);
  EXPECT_TRUE(t.terms[0].first.same_as(i));
  EXPECT_EQ(t.terms[0].second, 8);
  EXPECT_TRUE(t.terms[1].first.same_as(j));
  EXPECT_EQ(t.terms[1].second, 2);
  EXPECT_EQ(t.terms[2].first.ToString(), "j // 2");  // an atom
  EXPECT_EQ(t.terms[2].second, -1);
  EXPECT_EQ(t.constant, -6);
}

TEST(LinearTerms, NonConstantProductIsAnAtom) {
  Expr i = Var("i"), j = Var("j");
  LinearTerms t;
  CollectLinearTerms(i * j + 1, 3, &t);
  ASSERT_EQ(t.terms.size(), 1u);
  EXPECT_EQ(t.terms[0].second, 3);
  EXPECT_EQ(t.constant, 3);
}

TEST(LinearTerms, EqualAtomsAreKeptApartOrMerged) {
  Expr i = Var("i"), j = Var("j");
  Expr e = FloorDiv(i, 4) * 2 + j - FloorDiv(i, 4) * 2 + FloorDiv(i, 4);
  LinearTerms apart;
  CollectLinearTerms(e, 1, &apart);
  ASSERT_EQ(apart.terms.size(), 4u);
  LinearTerms merged;
  CollectLinearTerms(e, 1, &merged, EqualAtoms::kMerge);
  ASSERT_EQ(merged.terms.size(), 2u);
  EXPECT_EQ(merged.terms[0].first.ToString(), "i // 4");
  EXPECT_EQ(merged.terms[0].second, 1);
  EXPECT_TRUE(merged.terms[1].first.same_as(j));
  // Variables merge only with themselves, never with a namesake.
  LinearTerms vars;
  CollectLinearTerms(i - i + Var("i"), 1, &vars, EqualAtoms::kMerge);
  ASSERT_EQ(vars.terms.size(), 2u);
  EXPECT_EQ(vars.terms[0].second, 0);  // cancelled, kept
  EXPECT_EQ(vars.terms[1].second, 1);
}

TEST(LinearTerms, AddTermMergesUnlessAskedNotTo) {
  Expr i = Var("i");
  LinearTerms t;
  t.AddTerm(i, 2);
  t.AddTerm(i, 3);
  ASSERT_EQ(t.terms.size(), 1u);
  EXPECT_EQ(t.terms[0].second, 5);
  t.AddTerm(i, 1, EqualAtoms::kKeepApart);
  EXPECT_EQ(t.terms.size(), 2u);
}

TEST(LinearTerms, OverflowIsFlagged) {
  const int64_t big = std::numeric_limits<int64_t>::max() / 2 + 1;
  Expr i = Var("i");
  LinearTerms fits;
  CollectLinearTerms(i * big + 1, 1, &fits);
  EXPECT_FALSE(fits.overflowed);
  LinearTerms product;
  CollectLinearTerms(i * big * 2, 1, &product);
  EXPECT_TRUE(product.overflowed);
  LinearTerms scaled;
  CollectLinearTerms(IntImm(big), 2, &scaled);
  EXPECT_TRUE(scaled.overflowed);
  LinearTerms sum;
  CollectLinearTerms(IntImm(big), 1, &sum);
  EXPECT_FALSE(sum.overflowed);
  CollectLinearTerms(IntImm(big), 1, &sum);
  EXPECT_TRUE(sum.overflowed);
  LinearTerms merged;
  CollectLinearTerms(i * big + i * big, 1, &merged, EqualAtoms::kMerge);
  EXPECT_TRUE(merged.overflowed);
}

}  // namespace
}  // namespace lathe
