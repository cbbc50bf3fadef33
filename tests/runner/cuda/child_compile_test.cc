// Tests of runner/cuda/child_compile.h with stand-in children (sh): the
// output comes back, a failure names the exit and the first line of
// stderr, a child past its deadline is killed, one that stops reading its
// input does not take this process down with SIGPIPE.
#include "runner/cuda/child_compile.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace lathe::runner {
namespace {

TEST(CompileInChild, ReturnsWhatTheChildWrites) {
  const std::string source(200000, 'x');  // more than a pipe holds
  absl::StatusOr<std::string> out =
      CompileInChild({"/bin/sh", "-c", "tr x y"}, source, 10);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, std::string(200000, 'y'));
}

TEST(CompileInChild, AFailureNamesTheExitAndTheFirstLineOfStderr) {
  absl::StatusOr<std::string> out =
      CompileInChild({"/bin/sh", "-c",
                      "cat > /dev/null; echo 'no good' >&2; echo more >&2; "
                      "exit 3"},
                     "source", 10);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(out.status().message().find("exited 3: no good"), std::string::npos)
      << out.status();
  EXPECT_EQ(out.status().message().find("more"), std::string::npos);
}

TEST(CompileInChild, KillsAChildPastItsDeadline) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::string> out =
      CompileInChild({"/bin/sh", "-c", "sleep 30"}, "", 0.3);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_LT(seconds, 10);
}

TEST(CompileInChild, AChildThatStopsReadingIsAFailureNotASignal) {
  const std::string source(1 << 20, 'x');
  absl::StatusOr<std::string> out =
      CompileInChild({"/bin/sh", "-c", "exec 0<&-; exit 1"}, source, 10);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInternal);
}

TEST(CompileInChild, AMissingCommandIsAnError) {
  absl::StatusOr<std::string> out =
      CompileInChild({"/nonexistent/compiler"}, "source", 10);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("/nonexistent/compiler"),
            std::string::npos);
}

}  // namespace
}  // namespace lathe::runner
