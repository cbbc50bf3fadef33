#include "tuner/service/claim_registry.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lathe::service {
namespace {

const std::string kMatmul = "matmul-key";
const std::string kCpu = "llvm -mcpu=haswell";

TEST(ClaimRegistry, AHashHeldByOneRunIsRefusedToAnotherAllOrNone) {
  ClaimRegistry registry;
  int a = 0, b = 0;  // two runs, known by address
  registry.Join(kMatmul, kCpu);
  registry.Join(kMatmul, kCpu);
  EXPECT_TRUE(registry.Claim(kMatmul, kCpu, &a, {"s1", "l1"}));
  // The holder may claim its own hashes again (a program it dispatched).
  EXPECT_TRUE(registry.Claim(kMatmul, kCpu, &a, {"s1", "l1"}));
  // Another run is refused when any hash is held, and gets none of them:
  // "s2" stays free.
  EXPECT_FALSE(registry.Claim(kMatmul, kCpu, &b, {"s2", "l1"}));
  EXPECT_EQ(registry.claims(), 2);
  EXPECT_TRUE(registry.Claim(kMatmul, kCpu, &b, {"s2", "l2"}));
  EXPECT_FALSE(registry.Claim(kMatmul, kCpu, &a, {"s3", "l2"}));
  EXPECT_EQ(registry.claims(), 4);
}

TEST(ClaimRegistry, ReleasedClaimsAreFreeAgainButOnlyTheHoldersRelease) {
  ClaimRegistry registry;
  int a = 0, b = 0;
  registry.Join(kMatmul, kCpu);
  ASSERT_TRUE(registry.Claim(kMatmul, kCpu, &a, {"s1", "l1"}));
  registry.Release(kMatmul, kCpu, &b, {"s1", "l1"});  // not b's: no effect
  EXPECT_FALSE(registry.Claim(kMatmul, kCpu, &b, {"s1", "l1"}));
  registry.Release(kMatmul, kCpu, &a, {"s1", "l1"});
  EXPECT_TRUE(registry.Claim(kMatmul, kCpu, &b, {"s1", "l1"}));
}

TEST(ClaimRegistry, ClaimedHandsOnEachNewClaimOnce) {
  ClaimRegistry registry;
  int a = 0, b = 0;
  registry.Join(kMatmul, kCpu);
  ASSERT_TRUE(registry.Claim(kMatmul, kCpu, &a, {"s1", "l1"}));
  int64_t cursor = 0;
  absl::flat_hash_set<std::string> seen;
  registry.Claimed(kMatmul, kCpu, &cursor, seen);
  EXPECT_EQ(seen, (absl::flat_hash_set<std::string>{"s1", "l1"}));
  seen.clear();
  registry.Claimed(kMatmul, kCpu, &cursor, seen);
  EXPECT_TRUE(seen.empty());
  ASSERT_TRUE(registry.Claim(kMatmul, kCpu, &b, {"s2", "l2"}));
  registry.Claimed(kMatmul, kCpu, &cursor, seen);
  EXPECT_EQ(seen, (absl::flat_hash_set<std::string>{"s2", "l2"}));
}

TEST(ClaimRegistry, TasksAreKeyedByWorkloadAndTargetAndForgottenByTheLastRun) {
  ClaimRegistry registry;
  int a = 0, b = 0;
  registry.Join(kMatmul, kCpu);
  registry.Join(kMatmul, kCpu);
  registry.Join(kMatmul, "cuda -arch=sm_90");
  ASSERT_TRUE(registry.Claim(kMatmul, kCpu, &a, {"s1"}));
  // The same program on another target, or of another workload, is
  // another task's.
  EXPECT_TRUE(registry.Claim(kMatmul, "cuda -arch=sm_90", &b, {"s1"}));
  EXPECT_EQ(registry.tasks(), 2);
  // One run of the task left: the claims stay for the other.
  registry.Leave(kMatmul, kCpu);
  EXPECT_FALSE(registry.Claim(kMatmul, kCpu, &b, {"s1"}));
  // The last run gone: its records are in the database, the claims go.
  registry.Leave(kMatmul, kCpu);
  EXPECT_EQ(registry.tasks(), 1);
  EXPECT_EQ(registry.claims(), 1);
  // A task nobody joined keeps nothing.
  EXPECT_TRUE(registry.Claim(kMatmul, kCpu, &b, {"s1"}));
  EXPECT_TRUE(registry.Claim(kMatmul, kCpu, &a, {"s1"}));
  EXPECT_EQ(registry.claims(), 1);
}

TEST(ClaimRegistry, AModelTrainedThroughEarlierRecordsDoesNotReplaceALaterOne) {
  ClaimRegistry registry;
  std::vector<std::string> saved;
  auto save = [&](const std::string& what) {
    return [&saved, what] {
      saved.push_back(what);
      return absl::OkStatus();
    };
  };
  ASSERT_TRUE(registry.SaveModel(kCpu, "xgb", 10, save("a@10")).ok());
  ASSERT_TRUE(registry.SaveModel(kCpu, "xgb", 20, save("b@20")).ok());
  // Trained through record 15: b's model (through 20) learned all of it.
  ASSERT_TRUE(registry.SaveModel(kCpu, "xgb", 15, save("a@15")).ok());
  ASSERT_TRUE(registry.SaveModel(kCpu, "xgb", 20, save("a@20")).ok());
  // Other names and targets are apart.
  ASSERT_TRUE(registry.SaveModel(kCpu, "mlp", 1, save("mlp@1")).ok());
  ASSERT_TRUE(registry.SaveModel("cuda", "xgb", 1, save("cuda@1")).ok());
  // A failed save is not counted: a model through an earlier record is
  // still stored after it.
  EXPECT_FALSE(registry
                   .SaveModel(kCpu, "xgb", 30,
                              [] { return absl::InternalError("disk full"); })
                   .ok());
  ASSERT_TRUE(registry.SaveModel(kCpu, "xgb", 25, save("b@25")).ok());
  EXPECT_EQ(saved, (std::vector<std::string>{"a@10", "b@20", "a@20", "mlp@1",
                                             "cuda@1", "b@25"}));
}

}  // namespace
}  // namespace lathe::service
