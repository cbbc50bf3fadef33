// Tests of api/record_lookup.h: lookups that say whether a record still
// replays to the program that was measured.
#include "api/record_lookup.h"

#include <memory>
#include <string>

#include "compiler/codegen/cpu_target.h"
#include "gtest/gtest.h"
#include "tests/api/test_database.h"

namespace lathe::api {
namespace {

constexpr char kSpec[] = "matmul:M=16,N=24,K=8";

TEST(LookupChecked, ReturnsTheFastestFirstEachChecked) {
  TempFolder dir;
  const Target target = HostTarget(1);
  const std::string path = dir.path() + "/t.db";
  CreateDatabase(path,
                 {RecordOf(kSpec, target, 3e-3), RecordOf(kSpec, target, 1e-3),
                  RecordOf(kSpec, target, 2e-3, "not-the-measured-program")});
  std::unique_ptr<db::Database> db = OpenReadOnly(path);
  ASSERT_NE(db, nullptr);
  absl::StatusOr<std::vector<CheckedMatch>> matches = LookupChecked(
      *db, *ParseWorkloadSpec(kSpec), target, 2, db::TargetMatching::kExact);
  ASSERT_TRUE(matches.ok()) << matches.status();
  ASSERT_EQ(matches->size(), 2u);
  // The fastest replays to its recorded hash.
  EXPECT_TRUE((*matches)[0].replays) << (*matches)[0].replay_problem;
  EXPECT_TRUE((*matches)[0].replay_problem.empty());
  // The second claims a program this build does not replay to: said so,
  // naming the hash it claims.
  EXPECT_FALSE((*matches)[1].replays);
  EXPECT_NE((*matches)[1].replay_problem.find("not-the-measured-program"),
            std::string::npos)
      << (*matches)[1].replay_problem;
}

TEST(LookupChecked, AnotherWorkloadFindsNothing) {
  TempFolder dir;
  const Target target = HostTarget(1);
  const std::string path = dir.path() + "/t.db";
  CreateDatabase(path, {RecordOf(kSpec, target, 1e-3)});
  std::unique_ptr<db::Database> db = OpenReadOnly(path);
  ASSERT_NE(db, nullptr);
  absl::StatusOr<std::vector<CheckedMatch>> matches =
      LookupChecked(*db, *ParseWorkloadSpec("matmul:M=8,N=8,K=8"), target, 5,
                    db::TargetMatching::kExact);
  ASSERT_TRUE(matches.ok()) << matches.status();
  EXPECT_TRUE(matches->empty());
}

}  // namespace
}  // namespace lathe::api
