// Tests of database/database.h: opening, committing, cost models, read-only
// use (lookups are in database_lookup_test.cc, pruning and checking in
// database_maintenance_test.cc).
#include "database/database.h"

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <sqlite3.h>

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
      db_->CommitFrom([&](const Database::RecordSink& sink,
                          const Database::BatchSink&) -> absl::Status {
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

// A process holding the file's lock for a moment (recovering the WAL as it
// opens, checkpointing as it closes) makes an opener wait, up to its busy
// timeout, from its very first read: here the lock is held before Open
// starts and let go a little later.
TEST_F(DatabaseTest, OpeningWaitsForALockHeldForAMoment) {
  MustCommit({OkRecord("w", DefaultTarget(), "h1", 1e-3)});
  db_.reset();
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder,
                         "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; "
                         "SELECT COUNT(*) FROM sqlite_master;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  std::thread release([holder] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    sqlite3_exec(holder, "COMMIT", nullptr, nullptr, nullptr);
    sqlite3_close(holder);
  });
  absl::StatusOr<std::unique_ptr<Database>> reader =
      Database::Open(path_, ReadOnlyMode());
  release.join();
  ASSERT_TRUE(reader.ok()) << reader.status();
  absl::StatusOr<std::vector<proto::Record>> records =
      (*reader)->RecordsOfTask("w", DefaultTarget().canonical());
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(records->size(), 1u);
}

// Batch rows

TuningBatch BatchRow(const std::string& job, const std::string& workload,
                     const proto::TargetInfo& target) {
  TuningBatch batch;
  batch.job = job;
  batch.workload_key = workload;
  batch.target = target.canonical();
  batch.trials = 2;
  return batch;
}

TEST_F(DatabaseTest, ABatchRowIsCommittedWithItsRecordsOrNotAtAll) {
  const proto::TargetInfo target = DefaultTarget();
  // The row of a batch of a new task: its workload and target come with
  // the records of the same commit.
  TuningBatch batch = BatchRow("job-1", "w", target);
  batch.accuracy = 0.75;
  batch.trained_on = 6;
  absl::StatusOr<CommitResult> committed = db_->Commit(
      {OkRecord("w", target, "h1", 1e-3), OkRecord("w", target, "h2", 2e-3)},
      &batch);
  ASSERT_TRUE(committed.ok()) << committed.status();
  EXPECT_EQ(committed->added, 2);
  EXPECT_EQ(committed->batches_added, 1);
  EXPECT_EQ(committed->batch_index, 0);
  std::vector<TuningBatch> rows = *db_->Batches("w", target.canonical());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].job, "job-1");
  EXPECT_EQ(rows[0].accuracy.value_or(0), 0.75);
  EXPECT_EQ(rows[0].trained_on, 6);
  EXPECT_GT(rows[0].finished_ms, 0);  // 0 asked for the time of the commit

  // A record the commit refuses takes the batch row with it, and a batch
  // row it refuses (unknown target, or invalid) takes the records.
  proto::Record invalid = OkRecord("w", target, "h3", 1e-3);
  invalid.clear_structural_hash();
  TuningBatch elsewhere = BatchRow("job-1", "w", MakeTarget("haswell", {}, 1));
  TuningBatch wrong = BatchRow("job-1", "w", target);
  wrong.accuracy = 1.5;
  const struct {
    std::vector<proto::Record> records;
    const TuningBatch* batch;
    absl::StatusCode code;
    std::string words;
  } refused[] = {
      {{OkRecord("w", target, "h4", 1e-3), invalid},
       &batch,
       absl::StatusCode::kInvalidArgument,
       "record 1 "},
      {{OkRecord("w", target, "h4", 1e-3)},
       &elsewhere,
       absl::StatusCode::kNotFound,
       "num-threads=1\": no such target"},
      {{OkRecord("w", target, "h4", 1e-3)},
       &wrong,
       absl::StatusCode::kInvalidArgument,
       "batch row: accuracy is 1.5"},
  };
  for (const auto& r : refused) {
    SCOPED_TRACE(r.words);
    committed = db_->Commit(r.records, r.batch);
    ASSERT_FALSE(committed.ok());
    EXPECT_EQ(committed.status().code(), r.code) << committed.status();
    EXPECT_TRUE(Contains(committed.status(), path_)) << committed.status();
    EXPECT_TRUE(Contains(committed.status(), r.words)) << committed.status();
    EXPECT_EQ(db_->GetStats()->records, 2);
    EXPECT_EQ(db_->Batches("w", target.canonical())->size(), 1u);
  }

  // The job's next batch is numbered after it; a run without a job numbers
  // its own.
  committed = db_->Commit({OkRecord("w", target, "h4", 1e-3)}, &batch);
  ASSERT_TRUE(committed.ok()) << committed.status();
  EXPECT_EQ(committed->batch_index, 1);
  const TuningBatch jobless = BatchRow("", "w", target);
  EXPECT_EQ(db_->Commit({}, &jobless)->batch_index, 0);
  EXPECT_EQ(db_->Commit({}, &jobless)->batch_index, 1);
  EXPECT_TRUE(Problems().empty());
}

TEST_F(DatabaseTest, WritersOfOneJobOnOneFileNeverShareABatchIndex) {
  // Two connections (as two runs of the daemon, or two processes) commit
  // batches of the same job at once; each index is taken once.
  constexpr int kBatches = 20;
  MustCommit({OkRecord("w", DefaultTarget(), "h0", 1e-3)});
  std::vector<std::unique_ptr<Database>> writers;
  for (int w = 0; w < 2; ++w) {
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path_, ReadWriteMode());
    ASSERT_TRUE(db.ok()) << db.status();
    writers.push_back(*std::move(db));
  }
  std::vector<std::vector<int64_t>> taken(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      for (int b = 0; b < kBatches; ++b) {
        const TuningBatch batch = BatchRow("shared", "w", DefaultTarget());
        absl::StatusOr<CommitResult> committed =
            writers[w]->Commit({OkRecord("w", DefaultTarget(),
                                         absl::StrCat("h", w, "-", b), 1e-3)},
                               &batch);
        if (!committed.ok()) {
          errors[w] = committed.status().ToString();
          return;
        }
        taken[w].push_back(committed->batch_index.value_or(-1));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  std::set<int64_t> all;
  for (const std::vector<int64_t>& indices : taken)
    all.insert(indices.begin(), indices.end());
  EXPECT_EQ(all.size(), 2u * kBatches);
  EXPECT_EQ(*all.begin(), 0);
  EXPECT_EQ(*all.rbegin(), 2 * kBatches - 1);
  std::vector<TuningBatch> rows =
      *db_->Batches("w", DefaultTarget().canonical(), "shared");
  ASSERT_EQ(rows.size(), 2u * kBatches);
  for (size_t i = 0; i < rows.size(); ++i)
    EXPECT_EQ(rows[i].index, static_cast<int64_t>(i));  // in commit order
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
