// Tests of database/database.h: pruning, the best table through random
// batches, and Check.
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "database/database.h"
#include "gtest/gtest.h"
#include "tests/database/database_fixture.h"
#include "tests/database/test_records.h"

namespace lathe::db {
namespace {

using testing::Bytes;
using testing::DatabaseTest;
using testing::DefaultTarget;
using testing::MakeRecord;
using testing::MakeTarget;
using testing::OkRecord;
using testing::RawSql;
using testing::ReadOnlyMode;
using testing::ReadWriteMode;

// Prune

TEST_F(DatabaseTest, PruneKeepsTheKFastestOkRecordsOfEveryTask) {
  const proto::TargetInfo other = MakeTarget("znver4", {"avx2"}, 1);
  proto::Record pruned_job_record =
      OkRecord("a", DefaultTarget(), "slowest", 9e-3);
  pruned_job_record.set_job("old-job");
  proto::Job running;
  running.set_id("running-job");
  running.set_state("running");
  ASSERT_TRUE(db_->PutJob(running).ok());
  MustCommit({pruned_job_record, OkRecord("a", DefaultTarget(), "fast", 1e-3),
              OkRecord("a", DefaultTarget(), "mid", 2e-3),
              OkRecord("a", DefaultTarget(), "slow", 3e-3),
              MakeRecord("a", DefaultTarget(), "wrong", {1e-6},
                         proto::MEASURE_WRONG_RESULT),
              OkRecord("b", other, "only", 5e-3),
              MakeRecord("b", other, "crash", {}, proto::MEASURE_RUN_ERROR)});

  absl::StatusOr<int64_t> deleted = db_->Prune(2);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 4);  // slowest, slow, wrong, crash
  std::vector<std::string> a;
  for (const proto::Record& r : Task("a", DefaultTarget()))
    a.push_back(r.structural_hash());
  EXPECT_EQ(a, (std::vector<std::string>{"fast", "mid"}));
  std::vector<proto::Record> b = Task("b", other);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].structural_hash(), "only");

  // The job that lost its records goes; a running one stays.
  absl::StatusOr<std::vector<proto::Job>> jobs = db_->Jobs();
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].id(), "running-job");
  EXPECT_TRUE(Problems().empty()) << absl::StrJoin(Problems(), "\n");

  EXPECT_EQ(*db_->Prune(2), 0);
  EXPECT_EQ(db_->Prune(0).status().code(), absl::StatusCode::kInvalidArgument);
}

// Best answers from table best, which commits keep equal to the ranking of
// records (Top walks that ranking): random batches of re-measurements,
// failures and new programs over a few tasks, compared after every batch.
TEST_F(DatabaseTest, BestFollowsTheRankingThroughRandomBatchesAndPrune) {
  std::mt19937 rng(7);
  const std::vector<proto::TargetInfo> targets = {
      DefaultTarget(), MakeTarget("znver4", {"avx2"}, 1)};
  const std::vector<proto::MeasureStatus> failures = {
      proto::MEASURE_BUILD_ERROR, proto::MEASURE_RUN_ERROR,
      proto::MEASURE_TIMEOUT, proto::MEASURE_WRONG_RESULT};
  auto expect_best_is_top = [&](const std::string& when) {
    for (const char* key : {"a", "b", "c"}) {
      for (const proto::TargetInfo& target : targets) {
        absl::StatusOr<std::optional<Match>> best = db_->Best(key, target);
        absl::StatusOr<std::vector<Match>> top = db_->Top(key, target, 2);
        ASSERT_TRUE(best.ok() && top.ok()) << best.status() << top.status();
        ASSERT_EQ(best->has_value(), !top->empty()) << when << " " << key;
        if (top->empty()) continue;
        EXPECT_EQ(Bytes((*best)->record), Bytes((*top)[0].record))
            << when << " " << key;
      }
    }
    EXPECT_TRUE(Problems().empty())
        << when << ": " << absl::StrJoin(Problems(), "\n");
  };
  for (int batch = 0; batch < 40; ++batch) {
    std::vector<proto::Record> records;
    const int size = std::uniform_int_distribution<int>(1, 6)(rng);
    for (int i = 0; i < size; ++i) {
      const std::string key(1, static_cast<char>('a' + rng() % 3));
      const proto::TargetInfo& target = targets[rng() % targets.size()];
      // Few programs per task, so re-measurements of the winner are common.
      const std::string hash = absl::StrCat("p", rng() % 4);
      if (rng() % 4 == 0) {
        records.push_back(
            MakeRecord(key, target, hash, {1e-4}, failures[rng() % 4]));
      } else {
        const double median =
            1e-3 * std::uniform_int_distribution<int>(1, 9)(rng);
        records.push_back(OkRecord(key, target, hash, median));
        records.back().set_measured_at_unix_ms(batch * 100 +
                                               i);  // no exact duplicates
      }
    }
    MustCommit(records);
    expect_best_is_top(absl::StrCat("after batch ", batch));
  }
  ASSERT_TRUE(db_->Prune(1).ok());
  expect_best_is_top("after prune");
}

// Check

TEST_F(DatabaseTest, CheckReportsATableBestThatDisagreesWithTheRecords) {
  MustCommit({OkRecord("w", DefaultTarget(), "fast", 1e-3),
              OkRecord("w", DefaultTarget(), "slow", 2e-3)});
  const std::vector<proto::Record> stored = Task("w", DefaultTarget());
  db_.reset();
  RawSql(path_, absl::StrCat("UPDATE best SET id = ", stored[1].id(),
                             ", trace = x'00'"));
  absl::StatusOr<std::unique_ptr<Database>> db =
      Database::Open(path_, ReadOnlyMode());
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<CheckReport> report = (*db)->Check();
  ASSERT_TRUE(report.ok()) << report.status();
  const std::string problems = absl::StrJoin(report->problems, "\n");
  EXPECT_NE(problems.find(absl::StrCat("is record ", stored[1].id(),
                                       ", but the records rank ",
                                       stored[0].id(), " first")),
            std::string::npos)
      << problems;
  EXPECT_NE(problems.find(absl::StrCat("best row of record ", stored[1].id(),
                                       " differs")),
            std::string::npos)
      << problems;
}

TEST_F(DatabaseTest, CheckPassesASoundDatabase) {
  proto::Record with_job = OkRecord("w", DefaultTarget(), "h1", 1e-3);
  with_job.set_job("j");
  MustCommit(
      {with_job, MakeRecord("w", DefaultTarget(), "h2", {1e-3, 2e-3}),
       MakeRecord("w", DefaultTarget(), "h3", {}, proto::MEASURE_BUILD_ERROR)});
  absl::StatusOr<CheckReport> report = db_->Check();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << absl::StrJoin(report->problems, "\n");
  EXPECT_EQ(report->records_checked, 3);
}

TEST_F(DatabaseTest, CheckReportsATamperedMedian) {
  MustCommit({OkRecord("w", DefaultTarget(), "h1", 1e-3),
              OkRecord("w", DefaultTarget(), "h2", 2e-3)});
  const int64_t id = Task("w", DefaultTarget())[1].id();
  db_.reset();
  RawSql(path_,
         absl::StrCat("UPDATE records SET median_s = 1e-9 WHERE id = ", id));
  absl::StatusOr<std::unique_ptr<Database>> db =
      Database::Open(path_, ReadOnlyMode());
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<CheckReport> report = (*db)->Check();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->ok());
  EXPECT_EQ(report->records_checked, 2);
  const std::string problems = absl::StrJoin(report->problems, "\n");
  EXPECT_NE(problems.find(absl::StrCat("record ", id, ": ")), std::string::npos)
      << problems;
  EXPECT_NE(problems.find("fingerprint"), std::string::npos) << problems;
  EXPECT_NE(problems.find("not the median"), std::string::npos) << problems;
}

TEST_F(DatabaseTest, CheckReportsTamperedProvenanceAndBrokenBlobs) {
  MustCommit({OkRecord("w", DefaultTarget(), "h1", 1e-3),
              OkRecord("w", DefaultTarget(), "h2", 2e-3),
              OkRecord("w", DefaultTarget(), "h3", 2e-3)});
  std::vector<proto::Record> stored = Task("w", DefaultTarget());
  db_.reset();
  RawSql(path_,
         absl::StrCat("UPDATE records SET runner = 'someone else' WHERE id = ",
                      stored[0].id(),
                      "; UPDATE records SET trace = x'ffffffff' WHERE id = ",
                      stored[2].id()));
  absl::StatusOr<std::unique_ptr<Database>> db =
      Database::Open(path_, ReadWriteMode());
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<CheckReport> report = (*db)->Check();
  ASSERT_TRUE(report.ok()) << report.status();
  const std::string problems = absl::StrJoin(report->problems, "\n");
  EXPECT_NE(
      problems.find(absl::StrCat("record ", stored[0].id(), ": its content")),
      std::string::npos)
      << problems;
  EXPECT_NE(problems.find(absl::StrCat("record ", stored[2].id(),
                                       ": its trace does not parse")),
            std::string::npos)
      << problems;
  EXPECT_EQ(problems.find(absl::StrCat("record ", stored[1].id(), ":")),
            std::string::npos)
      << problems;
  // Lookups that reach the broken record say so rather than answer wrongly.
  absl::StatusOr<std::vector<proto::Record>> task =
      (*db)->RecordsOfTask("w", DefaultTarget().canonical());
  EXPECT_EQ(task.status().code(), absl::StatusCode::kDataLoss) << task.status();
}

TEST_F(DatabaseTest, AFailedReadLeavesNoOldSnapshotBehind) {
  MustCommit({OkRecord("w", DefaultTarget(), "h1", 1e-3),
              OkRecord("w", DefaultTarget(), "h2", 2e-3)});
  const int64_t broken = Task("w", DefaultTarget())[0].id();
  RawSql(path_,
         absl::StrCat("UPDATE records SET trace = x'ffffffff' WHERE id = ",
                      broken));
  absl::StatusOr<std::unique_ptr<Database>> reader =
      Database::Open(path_, ReadOnlyMode());
  ASSERT_TRUE(reader.ok()) << reader.status();
  // Fails on the first row, with the rest of the query still pending.
  absl::StatusOr<std::vector<proto::Record>> task =
      (*reader)->RecordsOfTask("w", DefaultTarget().canonical());
  ASSERT_EQ(task.status().code(), absl::StatusCode::kDataLoss) << task.status();
  // A batch committed afterwards is seen by the reader's next query.
  MustCommit({OkRecord("v", DefaultTarget(), "h3", 1e-3)});
  absl::StatusOr<std::optional<Match>> best =
      (*reader)->Best("v", DefaultTarget());
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_TRUE(best->has_value());
  absl::StatusOr<Stats> stats = (*reader)->GetStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->records, 3);
}

TEST_F(DatabaseTest, CheckReportsAMissingReferencedRow) {
  proto::Record record = OkRecord("w", DefaultTarget(), "h1", 1e-3);
  record.set_job("j");
  MustCommit({record});
  db_.reset();
  RawSql(path_, "PRAGMA foreign_keys = OFF; DELETE FROM jobs");
  absl::StatusOr<std::unique_ptr<Database>> db =
      Database::Open(path_, ReadOnlyMode());
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<CheckReport> report = (*db)->Check();
  ASSERT_TRUE(report.ok()) << report.status();
  const std::string problems = absl::StrJoin(report->problems, "\n");
  EXPECT_NE(problems.find("foreign_key_check"), std::string::npos) << problems;
  EXPECT_NE(problems.find("jobs"), std::string::npos) << problems;
}

}  // namespace
}  // namespace lathe::db
