#include "compiler/arith/int_math.h"

#include <gtest/gtest.h>

namespace lathe {
namespace {

TEST(IntMath, FloorSemantics) {
  EXPECT_EQ(FloorDivInt(7, 2), 3);
  EXPECT_EQ(FloorDivInt(-7, 2), -4);
  EXPECT_EQ(FloorDivInt(7, -2), -4);
  EXPECT_EQ(FloorDivInt(-8, 2), -4);
  EXPECT_EQ(FloorModInt(-7, 2), 1);
  EXPECT_EQ(FloorModInt(7, -2), -1);
  EXPECT_EQ(FloorModInt(-8, 4), 0);
}

}  // namespace
}  // namespace lathe
