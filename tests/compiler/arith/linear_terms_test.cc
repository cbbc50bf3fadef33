#include "compiler/arith/linear_terms.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace lathe
