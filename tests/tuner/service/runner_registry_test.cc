#include "tuner/service/runner_registry.h"

#include <gtest/gtest.h>

namespace lathe::service {
namespace {

proto::RegisterRunnerRequest Request(const std::string& name) {
  proto::RegisterRunnerRequest request;
  request.set_name(name);
  request.set_target("llvm -num-threads=1");
  request.set_device("test box");
  return request;
}

TEST(RunnerRegistry, QuarantinesAfterConsecutiveFailuresOnly) {
  RunnerRegistry registry(/*quarantine_after=*/3, absl::Seconds(60));
  const std::string id =
      registry.Register(Request("flaky"), "ipv4:127.0.0.1:1").value();
  EXPECT_TRUE(registry.CheckActive(id).ok());
  // Two failures, a success: the count starts again.
  EXPECT_FALSE(registry.RecordResult(id, true));
  EXPECT_FALSE(registry.RecordResult(id, true));
  EXPECT_FALSE(registry.RecordResult(id, false));
  EXPECT_FALSE(registry.RecordResult(id, true));
  EXPECT_FALSE(registry.RecordResult(id, true));
  EXPECT_TRUE(registry.CheckActive(id).ok());
  // The third in a row quarantines it, once, and it is told why.
  EXPECT_TRUE(registry.RecordResult(id, true, "killed by signal 6 (SIGABRT)"));
  EXPECT_FALSE(registry.RecordResult(id, true));
  absl::Status active = registry.CheckActive(id);
  EXPECT_EQ(active.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(active.message().find("quarantined"), std::string::npos) << active;
  EXPECT_NE(active.message().find("(the last: killed by signal 6 (SIGABRT))"),
            std::string::npos)
      << active;
  std::vector<proto::RunnerInfo> list = registry.List({});
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].state(), proto::RUNNER_QUARANTINED);
  EXPECT_EQ(list[0].results(), 7);
  EXPECT_EQ(list[0].failures(), 6);
}

TEST(RunnerRegistry, OtherRunnersAreNotAffectedAndZeroNeverQuarantines) {
  RunnerRegistry registry(/*quarantine_after=*/1, absl::Seconds(60));
  const std::string bad = registry.Register(Request("bad"), "").value();
  const std::string good = registry.Register(Request("good"), "").value();
  EXPECT_NE(bad, good);
  EXPECT_TRUE(registry.RecordResult(bad, true));
  EXPECT_TRUE(registry.CheckActive(good).ok());
  RunnerRegistry never(/*quarantine_after=*/0, absl::Seconds(60));
  const std::string id = never.Register(Request("r"), "").value();
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(never.RecordResult(id, true));
  EXPECT_TRUE(never.CheckActive(id).ok());
}

TEST(RunnerRegistry, UnknownRunnerIsNotFoundAndSilentRunnerIsLost) {
  absl::Time now = absl::FromUnixSeconds(100);
  RunnerRegistry registry(3, absl::Seconds(10), absl::InfiniteDuration(),
                          [&] { return now; });
  EXPECT_EQ(registry.CheckActive("r1-from-an-earlier-daemon").code(),
            absl::StatusCode::kNotFound);
  const std::string id = registry.Register(Request("r"), "").value();
  EXPECT_EQ(registry.List({{id, 2}})[0].state(), proto::RUNNER_BUSY);
  EXPECT_EQ(registry.List({})[0].state(), proto::RUNNER_IDLE);
  now += absl::Seconds(11);
  EXPECT_EQ(registry.List({})[0].state(), proto::RUNNER_LOST);
  EXPECT_TRUE(registry.CheckActive(id).ok());  // heard from again
  EXPECT_EQ(registry.List({})[0].state(), proto::RUNNER_IDLE);
}

TEST(RunnerRegistry, RunnerSilentForLongIsForgottenAndMustRegisterAgain) {
  absl::Time now = absl::FromUnixSeconds(100);
  RunnerRegistry registry(3, absl::Seconds(10), absl::Seconds(60),
                          [&] { return now; });
  const std::string gone = registry.Register(Request("gone"), "").value();
  const std::string alive = registry.Register(Request("alive"), "").value();
  now += absl::Seconds(40);
  EXPECT_TRUE(registry.CheckActive(alive).ok());
  now += absl::Seconds(30);  // gone: silent 70 s; alive: 30 s
  std::vector<proto::RunnerInfo> list = registry.List({});
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].id(), alive);
  EXPECT_EQ(list[0].state(), proto::RUNNER_LOST);  // silent longer than 10 s
  // Coming back, the forgotten runner learns it must register again.
  EXPECT_EQ(registry.CheckActive(gone).code(), absl::StatusCode::kNotFound);
  // Registering also sweeps.
  now += absl::Seconds(61);
  registry.Register(Request("new"), "").value();
  list = registry.List({});
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].name(), "new");
}

// Registrations are bounded: beyond max_runners known runners a new one is
// refused, naming the limit, until a silent one is forgotten.
TEST(RunnerRegistry, RefusesRegistrationsBeyondTheLimit) {
  absl::Time now = absl::UnixEpoch();
  RunnerRegistry registry(
      3, absl::Seconds(10), absl::Seconds(60), [&] { return now; },
      /*max_runners=*/4);
  for (int i = 0; i < 4; ++i)
    ASSERT_TRUE(registry.Register(Request("r"), "").ok());
  absl::StatusOr<std::string> refused = registry.Register(Request("r"), "");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("limit of 4 runners"),
            std::string::npos)
      << refused.status();
  EXPECT_EQ(registry.List({}).size(), 4u);
  now += absl::Seconds(61);  // all silent: forgotten, room again
  EXPECT_TRUE(registry.Register(Request("r"), "").ok());
}

}  // namespace
}  // namespace lathe::service
