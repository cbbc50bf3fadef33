#include "tuner/service/job_preparation.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>

namespace lathe::service {
namespace {

// Work that runs until released (a stand-in for a runaway design space).
struct Gate {
  std::atomic<bool> open{false};
  std::atomic<bool> finished{false};
};

std::function<absl::StatusOr<PreparedJob>()> Blocked(
    std::shared_ptr<Gate> gate) {
  return [gate]() -> absl::StatusOr<PreparedJob> {
    while (!gate->open.load()) std::this_thread::yield();
    gate->finished = true;
    return PreparedJob{};
  };
}

TEST(JobPreparerTest, ReturnsTheWorksResult) {
  JobPreparer preparer(2, absl::Seconds(30));
  absl::StatusOr<PreparedJob> done = preparer.Run(
      [] {
        PreparedJob job;
        job.spec.set_target("t");
        return absl::StatusOr<PreparedJob>(job);
      },
      nullptr);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->spec.target(), "t");
  EXPECT_EQ(preparer
                .Run(
                    [] {
                      return absl::StatusOr<PreparedJob>(
                          absl::InvalidArgumentError("spec.x: bad"));
                    },
                    nullptr)
                .status()
                .message(),
            "spec.x: bad");
}

// The caller is answered at the deadline or as soon as it stops waiting,
// while the work goes on on its own thread and still counts toward the
// limit until it ends.
TEST(JobPreparerTest, DeadlineAndAbandonAnswerAtOnceAndTheLimitHolds) {
  JobPreparer preparer(2, absl::Milliseconds(100));
  auto first = std::make_shared<Gate>(), second = std::make_shared<Gate>();
  const absl::Time start = absl::Now();
  absl::Status late = preparer.Run(Blocked(first), nullptr).status();
  EXPECT_EQ(late.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(late.message().find("100ms"), std::string::npos) << late;
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  std::atomic<bool> client_gone{true};
  EXPECT_EQ(preparer.Run(Blocked(second), [&] { return client_gone.load(); })
                .status()
                .code(),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(preparer.running(), 2);
  absl::Status refused =
      preparer
          .Run([] { return absl::StatusOr<PreparedJob>(PreparedJob{}); },
               nullptr)
          .status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.message().find("2 submitted jobs"), std::string::npos);
  first->open = true;
  second->open = true;
  while (preparer.running() > 0) std::this_thread::yield();
  EXPECT_TRUE(first->finished && second->finished);
  EXPECT_TRUE(
      preparer
          .Run([] { return absl::StatusOr<PreparedJob>(PreparedJob{}); },
               nullptr)
          .ok());
}

}  // namespace
}  // namespace lathe::service
