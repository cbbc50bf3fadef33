// Tests of database/database.h: opening, committing, cost models, read-only
// use (lookups are in database_lookup_test.cc, pruning and checking in
// database_maintenance_test.cc).
#include "database/database.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "database/sqlite_connection.h"
#include "gtest/gtest.h"
#include "tests/database/database_fixture.h"
#include "tests/database/test_records.h"

namespace lathe::db {
namespace {

using testing::Bytes;
using testing::Contains;
using testing::CreateMode;
using testing::DatabaseTest;
using testing::DefaultTarget;
using testing::FileExists;
using testing::MakeRecord;
using testing::MakeTarget;
using testing::OkRecord;
using testing::ReadOnlyMode;
using testing::ReadWriteMode;
using testing::TempFolder;
using testing::WithoutId;
using testing::WriteFile;

// Open

TEST(DatabaseOpen, OnlyCreateMakesANewDatabase) {
  TempFolder folder;
  const std::string path = folder.File("new.db");
  for (OpenOptions options : {ReadOnlyMode(), ReadWriteMode()}) {
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, options);
    ASSERT_FALSE(db.ok());
    EXPECT_EQ(db.status().code(), absl::StatusCode::kNotFound);
    EXPECT_TRUE(Contains(db.status(), path)) << db.status();
    EXPECT_FALSE(FileExists(path));
  }
  absl::StatusOr<std::unique_ptr<Database>> db =
      Database::Open(path, CreateMode());
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ((*db)->path(), path);
  EXPECT_TRUE(FileExists(path));
}

TEST(DatabaseOpen, CreateFillsAnEmptyFileButOtherModesRefuseIt) {
  TempFolder folder;
  const std::string path = folder.File("empty.db");
  WriteFile(path, "");
  for (OpenOptions options : {ReadOnlyMode(), ReadWriteMode()}) {
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, options);
    ASSERT_FALSE(db.ok());
    EXPECT_TRUE(Contains(db.status(), path)) << db.status();
  }
  absl::StatusOr<std::unique_ptr<Database>> db =
      Database::Open(path, CreateMode());
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<Stats> stats = (*db)->GetStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->schema_version, Database::CurrentSchemaVersion());
}

TEST(DatabaseOpen, AReaderSeesWhatAWriterCommittedLater) {
  TempFolder folder;
  const std::string path = folder.File("lathe.db");
  absl::StatusOr<std::unique_ptr<Database>> writer =
      Database::Open(path, CreateMode());
  ASSERT_TRUE(writer.ok()) << writer.status();
  absl::StatusOr<std::unique_ptr<Database>> reader =
      Database::Open(path, ReadOnlyMode());
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->GetStats()->records, 0);
  ASSERT_TRUE(
      (*writer)->Commit({OkRecord("w", DefaultTarget(), "h", 1e-3)}).ok());
  EXPECT_EQ((*reader)->GetStats()->records, 1);
}

// Commit

TEST_F(DatabaseTest, CommitStoresRecordsInOrderAndReadsThemBack) {
  std::vector<proto::Record> batch;
  for (int i = 0; i < 5; ++i) {
    batch.push_back(
        OkRecord("w", DefaultTarget(), absl::StrCat("h", i), 1e-3 * (5 - i)));
  }
  batch[3].set_job("job-a");
  CommitResult result = MustCommit(batch);
  EXPECT_EQ(result.added, 5);
  EXPECT_EQ(result.duplicates, 0);

  std::vector<proto::Record> stored = Task("w", DefaultTarget());
  ASSERT_EQ(stored.size(), batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    EXPECT_GT(stored[i].id(), i > 0 ? stored[i - 1].id() : 0);
    EXPECT_EQ(Bytes(WithoutId(stored[i])), Bytes(batch[i])) << i;
  }
}

TEST_F(DatabaseTest, AFailedRecordOfEveryStatusKeepsItsContent) {
  // A wrong result was timed too: its median must come back as it went in,
  // or its fingerprint no longer matches (Check) and a re-import of an
  // export does not see it as a duplicate.
  proto::Record wrong =
      MakeRecord("w", DefaultTarget(), "h1", {1e-4, 2e-4, 3e-4},
                 proto::MEASURE_WRONG_RESULT);
  ASSERT_GT(wrong.median_s(), 0);
  proto::Record crashed =
      MakeRecord("w", DefaultTarget(), "h2", {}, proto::MEASURE_RUN_ERROR);
  MustCommit({wrong, crashed});
  std::vector<proto::Record> stored = Task("w", DefaultTarget());
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(Bytes(WithoutId(stored[0])), Bytes(wrong));
  EXPECT_EQ(Bytes(WithoutId(stored[1])), Bytes(crashed));
  EXPECT_EQ(MustCommit({WithoutId(stored[0])}).duplicates, 1);
  EXPECT_TRUE(Problems().empty()) << absl::StrJoin(Problems(), "\n");
}

TEST_F(DatabaseTest, AnInvalidRecordFailsTheWholeBatchNamingItsIndexAndField) {
  MustCommit({OkRecord("before", DefaultTarget(), "h0", 1e-3)});
  std::vector<proto::Record> batch;
  for (int i = 0; i < 5; ++i) {
    proto::Record record = OkRecord("w", MakeTarget("znver4", {"avx2"}, 8),
                                    absl::StrCat("h", i), 1e-3 * (i + 1));
    record.set_job("job-new");
    batch.push_back(record);
  }
  batch[3].clear_structural_hash();

  absl::StatusOr<CommitResult> result = db_->Commit(batch);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(result.status(), path_)) << result.status();
  EXPECT_TRUE(Contains(result.status(), "record 3 ")) << result.status();
  EXPECT_TRUE(Contains(result.status(), "structural_hash")) << result.status();

  // Nothing of the batch: no records, and none of the workloads, targets and
  // jobs its first three records brought.
  absl::StatusOr<Stats> stats = db_->GetStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->records, 1);
  EXPECT_EQ(stats->workloads, 1);
  EXPECT_EQ(stats->targets, 1);
  EXPECT_EQ(stats->jobs, 0);

  // The database takes the next batch.
  batch[3].set_structural_hash("h3");
  EXPECT_EQ(MustCommit(batch).added, 5);
}

TEST_F(DatabaseTest, AWorkloadKeyStoredWithAnotherFormFailsTheBatch) {
  MustCommit({OkRecord("w", DefaultTarget(), "h0", 1e-3)});
  proto::Record good = OkRecord("v", DefaultTarget(), "h1", 1e-3);
  proto::Record clash = OkRecord("w", DefaultTarget(), "h2", 1e-3);
  clash.set_workload("a different form");
  absl::StatusOr<CommitResult> result = db_->Commit({good, clash});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(result.status(), "record 1 ")) << result.status();
  EXPECT_EQ(db_->GetStats()->records, 1);
}

TEST_F(DatabaseTest, ExactDuplicatesAreSkippedAndCounted) {
  const proto::Record a = OkRecord("w", DefaultTarget(), "h1", 1e-3);
  const proto::Record b = OkRecord("w", DefaultTarget(), "h2", 2e-3);
  CommitResult first = MustCommit({a, b, a});
  EXPECT_EQ(first.added, 2);
  EXPECT_EQ(first.duplicates, 1);

  // Provenance is content: the same program measured by another runner is a
  // new record.
  proto::Record again = a;
  again.set_runner("remote:other");
  proto::Record with_id = b;
  with_id.set_id(999);  // the row id is not content
  CommitResult second = MustCommit({a, again, with_id});
  EXPECT_EQ(second.added, 1);
  EXPECT_EQ(second.duplicates, 2);
  EXPECT_EQ(Task("w", DefaultTarget()).size(), 3u);
}

TEST_F(DatabaseTest, ASecondWriterFailsAsUnavailableWhileABatchIsOpen) {
  OpenOptions impatient = ReadWriteMode();
  impatient.busy_timeout_ms = 50;
  absl::StatusOr<std::unique_ptr<Database>> other =
      Database::Open(path_, impatient);
  ASSERT_TRUE(other.ok()) << other.status();
  absl::StatusOr<CommitResult> inner;
  absl::StatusOr<CommitResult> outer =
      db_->CommitFrom([&](const Database::RecordSink& sink) -> absl::Status {
        LATHE_RETURN_IF_ERROR(sink(OkRecord("w", DefaultTarget(), "h1", 1e-3)));
        inner = (*other)->Commit({OkRecord("w", DefaultTarget(), "h2", 1e-3)});
        return absl::OkStatus();
      });
  ASSERT_TRUE(outer.ok()) << outer.status();
  ASSERT_FALSE(inner.ok());
  EXPECT_EQ(inner.status().code(), absl::StatusCode::kUnavailable)
      << inner.status();
  EXPECT_TRUE(Contains(inner.status(), path_)) << inner.status();
  // Once the first batch is in, the second writer's goes in too.
  absl::StatusOr<CommitResult> retried =
      (*other)->Commit({OkRecord("w", DefaultTarget(), "h2", 1e-3)});
  ASSERT_TRUE(retried.ok()) << retried.status();
  EXPECT_EQ(Task("w", DefaultTarget()).size(), 2u);
}

TEST_F(DatabaseTest, CommitCreatesTheJobsOfItsRecords) {
  proto::Job described;
  described.set_id("job-described");
  described.set_description("tune matmul");
  described.set_created_at_unix_ms(1234);
  described.set_state("running");
  ASSERT_TRUE(db_->PutJob(described).ok());

  proto::Record a = OkRecord("w", DefaultTarget(), "h1", 1e-3);
  a.set_job("job-described");
  proto::Record b = OkRecord("w", DefaultTarget(), "h2", 1e-3);
  b.set_job("job-unknown");
  MustCommit({a, b});

  absl::StatusOr<std::vector<proto::Job>> jobs = db_->Jobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 2u);
  std::map<std::string, proto::Job> by_id;
  for (const proto::Job& job : *jobs) by_id[job.id()] = job;
  ASSERT_TRUE(by_id.count("job-unknown"));
  // A record's job does not overwrite what PutJob said.
  EXPECT_EQ(by_id["job-described"].description(), "tune matmul");
  EXPECT_EQ(by_id["job-described"].created_at_unix_ms(), 1234);
  EXPECT_EQ(by_id["job-described"].state(), "running");

  described.set_state("done");
  described.set_description("tuned matmul");
  ASSERT_TRUE(db_->PutJob(described).ok());
  jobs = db_->Jobs();
  ASSERT_TRUE(jobs.ok());
  for (const proto::Job& job : *jobs) {
    if (job.id() != "job-described") continue;
    EXPECT_EQ(job.state(), "done");
    EXPECT_EQ(job.description(), "tuned matmul");
    EXPECT_EQ(job.created_at_unix_ms(), 1234);
  }
  proto::Job nameless;
  EXPECT_EQ(db_->PutJob(nameless).code(), absl::StatusCode::kInvalidArgument);
}

// Cost models

TEST_F(DatabaseTest, CostModelsArePerTargetAndNameAndReplaced) {
  const proto::TargetInfo other = MakeTarget("znver4", {"avx2"}, 1);
  absl::StatusOr<std::optional<std::string>> model =
      db_->GetCostModel(DefaultTarget().canonical(), "xgb");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_FALSE(model->has_value());

  const std::string bytes("model\0bytes", 11);
  ASSERT_TRUE(db_->PutCostModel(DefaultTarget(), "xgb", bytes, 100).ok());
  ASSERT_TRUE(
      db_->PutCostModel(DefaultTarget(), "mlp", "other model", 100).ok());
  ASSERT_TRUE(db_->PutCostModel(other, "xgb", "", 0).ok());
  EXPECT_EQ(db_->GetCostModel(DefaultTarget().canonical(), "xgb")->value_or(""),
            bytes);
  EXPECT_EQ(db_->GetCostModel(DefaultTarget().canonical(), "mlp")->value_or(""),
            "other model");
  std::optional<std::string> empty =
      *db_->GetCostModel(other.canonical(), "xgb");
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(*empty, "");

  ASSERT_TRUE(db_->PutCostModel(DefaultTarget(), "xgb", "retrained", 200).ok());
  EXPECT_EQ(db_->GetCostModel(DefaultTarget().canonical(), "xgb")->value_or(""),
            "retrained");
  EXPECT_TRUE(Problems().empty()) << absl::StrJoin(Problems(), "\n");
}

// Read-only

TEST_F(DatabaseTest, AReadOnlyDatabaseRefusesEveryWriteNamingTheFile) {
  MustCommit({OkRecord("w", DefaultTarget(), "h1", 1e-3)});
  absl::StatusOr<std::unique_ptr<Database>> db =
      Database::Open(path_, ReadOnlyMode());
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<CommitResult> committed =
      (*db)->Commit({OkRecord("w", DefaultTarget(), "h2", 1e-3)});
  ASSERT_FALSE(committed.ok());
  EXPECT_EQ(committed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(committed.status(), path_)) << committed.status();
  EXPECT_TRUE(Contains(committed.status(), "lookups only"))
      << committed.status();

  proto::Job job;
  job.set_id("j");
  EXPECT_FALSE((*db)->PutJob(job).ok());
  EXPECT_FALSE((*db)->Prune(1).ok());
  EXPECT_FALSE((*db)->PutCostModel(DefaultTarget(), "xgb", "m", 1).ok());
  // Lookups work, and nothing was written.
  absl::StatusOr<std::optional<Match>> best = (*db)->Best("w", DefaultTarget());
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_TRUE(best->has_value());
  EXPECT_EQ(db_->GetStats()->records, 1);
  EXPECT_EQ(db_->GetStats()->jobs, 0);
}

}  // namespace
}  // namespace lathe::db
