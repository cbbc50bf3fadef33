// Inlining within kMaxInlinedExprNodes (analysis/inlined_size.h): a chain of
// stages that each read the one before twice keeps a design space and a
// default schedule linear in the chain's length.
#include "compiler/schedule/analysis/inlined_size.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/default_schedule.h"
#include "compiler/schedule/primitive/compute_inline.h"
#include "compiler/schedule/replay.h"
#include "compiler/workload/custom_workload.h"

namespace lathe {
namespace {

// T1[i] = T0[i] * T0[i]; ...; T<n>[i] = T<n-1>[i] * T<n-1>[i].
Program SquaringChain(int n) {
  std::string expr;
  for (int k = 1; k <= n; ++k) {
    absl::StrAppend(&expr, "T", k, "[i] = T", k - 1, "[i] * T", k - 1, "[i]; ");
  }
  absl::StatusOr<Workload> workload = ParseCustomWorkload(expr, "i=64");
  EXPECT_TRUE(workload.ok()) << workload.status();
  absl::StatusOr<Program> program = workload->InitialProgram();
  EXPECT_TRUE(program.ok()) << program.status();
  return *std::move(program);
}

int64_t LargestStoredValue(const Program& program) {
  int64_t largest = 0;
  VisitStmts(program.root.get(), [&](const StmtNode* s) {
    VisitOwnExprs(*s, [&](const Expr& e) {
      largest = std::max(largest, ExprTreeSize(e, int64_t{1} << 40));
    });
    return true;
  });
  return largest;
}

TEST(InlinedSize, CountsATreeAndStopsPastTheCap) {
  Expr x = Var("x");
  Expr e = x;
  for (int k = 0; k < 60; ++k) e = e * e;  // 2^61 - 1 nodes as a tree
  EXPECT_EQ(ExprTreeSize(x * x, 100), 3);
  EXPECT_GT(ExprTreeSize(e, 1000), 1000);
  EXPECT_LE(ExprTreeSize(e, 1000), 1001);
}

TEST(InlinedSize, ASquaringChainStopsInliningAtTheLimit) {
  const Program initial = SquaringChain(20);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Trace> trace = DefaultSchedule(initial, {});
  ASSERT_TRUE(trace.ok()) << trace.status();
  absl::StatusOr<std::unique_ptr<TracedSchedule>> replayed =
      ReplayTrace(*trace, initial);
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_LE(LargestStoredValue((*replayed)->program()), kMaxInlinedExprNodes);
  // Some stages were inlined (the chain is not left as it was).
  EXPECT_LT((*replayed)->program().Blocks().size(), initial.Blocks().size());
}

TEST(InlinedSize, ComputeInlineRefusesPastTheLimit) {
  Program program = SquaringChain(20);
  int refused = 0;
  for (int k = 1; k < 20; ++k) {
    absl::Status status =
        primitive::ComputeInline(&program, absl::StrCat("T", k));
    if (!status.ok()) {
      EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
      EXPECT_NE(status.message().find("kMaxInlinedExprNodes"),
                std::string::npos)
          << status;
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_LE(LargestStoredValue(program), kMaxInlinedExprNodes);
}

TEST(InlinedSize, ReverseComputeInlineRefusesPastTheLimit) {
  Program program = SquaringChain(20);
  int refused = 0;
  for (int k = 2; k <= 20; ++k) {
    absl::Status status =
        primitive::ReverseComputeInline(&program, absl::StrCat("T", k));
    if (!status.ok()) {
      EXPECT_NE(status.message().find("kMaxInlinedExprNodes"),
                std::string::npos)
          << status;
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_LE(LargestStoredValue(program), kMaxInlinedExprNodes);
}

}  // namespace
}  // namespace lathe
