// Runs the C-language checks of c_abi_test.c (compiled as C99) from gtest.
#include "gtest/gtest.h"

extern "C" int lathe_c_abi_check(void);

namespace lathe::runtime {
namespace {

TEST(CAbiTest, HeaderAndFunctionsWorkFromC) {
  EXPECT_EQ(lathe_c_abi_check(), 0) << "the number of the failing check";
}

}  // namespace
}  // namespace lathe::runtime
