// Tests of base/status_macros.h and base/check.h.
#include "base/status_macros.h"

#include <memory>
#include <string>

#include "base/check.h"
#include "gtest/gtest.h"

namespace lathe {
namespace {

absl::Status FailIf(bool fail) {
  return fail ? absl::NotFoundError("the thing") : absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<int>> Make(bool fail) {
  if (fail) return absl::InvalidArgumentError("bad size");
  return std::make_unique<int>(7);
}

// Counts how far it got, to show that an error returns at once.
absl::Status Steps(bool fail_first, int& reached) {
  LATHE_RETURN_IF_ERROR(FailIf(fail_first));
  reached = 1;
  LATHE_RETURN_IF_ERROR(FailIf(false));
  reached = 2;
  return absl::OkStatus();
}

absl::StatusOr<int> Twice(bool fail) {
  // A move-only value, and two uses in one scope (distinct temporaries).
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<int> a, Make(fail));
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<int> b, Make(false));
  return *a + *b;
}

TEST(StatusMacros, ReturnIfErrorReturnsTheErrorAtOnce) {
  int reached = 0;
  absl::Status s = Steps(true, reached);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "the thing");
  EXPECT_EQ(reached, 0);
  EXPECT_TRUE(Steps(false, reached).ok());
  EXPECT_EQ(reached, 2);
}

TEST(StatusMacros, AssignOrReturnMovesTheValueOrReturnsTheError) {
  absl::StatusOr<int> ok = Twice(false);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(*ok, 14);
  absl::StatusOr<int> bad = Twice(true);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "bad size");
}

TEST(CheckDeathTest, AFailedCheckAbortsNamingTheConditionAndMessage) {
  const int n = 3;
  EXPECT_DEATH(LATHE_CHECK(n == 4, "n is ", n), "check n == 4 failed: n is 3");
}

}  // namespace
}  // namespace lathe
