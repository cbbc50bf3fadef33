// Tests of database/database.h: opening, committing, lookups, pruning,
// checking, cost models.
#include "database/database.h"

#include <memory>
#include <random>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "database/sqlite_connection.h"
#include "gtest/gtest.h"
#include "tests/database/test_records.h"

namespace lathe::db {
namespace {

using testing::Bytes;
using testing::CreateMode;
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

bool Contains(const absl::Status& status, absl::string_view text) {
  return status.message().find(text) != absl::string_view::npos;
}

// Runs SQL on the file behind Lathe's back (tampering, as a bad tool would).
void RawSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

class DatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = folder_.File("lathe.db");
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path_, CreateMode());
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }

  CommitResult MustCommit(const std::vector<proto::Record>& batch) {
    absl::StatusOr<CommitResult> result = db_->Commit(batch);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.value_or(CommitResult{});
  }

  std::vector<proto::Record> Task(const std::string& key,
                                  const proto::TargetInfo& target) {
    absl::StatusOr<std::vector<proto::Record>> records =
        db_->RecordsOfTask(key, target.canonical());
    EXPECT_TRUE(records.ok()) << records.status();
    return records.value_or(std::vector<proto::Record>{});
  }

  std::vector<std::string> Problems() {
    absl::StatusOr<CheckReport> report = db_->Check();
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? report->problems
                       : std::vector<std::string>{"Check failed"};
  }

  TempFolder folder_;
  std::string path_;
  std::unique_ptr<Database> db_;
};

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

// Best and Top

TEST_F(DatabaseTest, BestIsTheFastestOkRecordAndTopListsFastestFirst) {
  MustCommit({OkRecord("w", DefaultTarget(), "slow", 3e-3),
              OkRecord("w", DefaultTarget(), "fast", 1e-3),
              OkRecord("w", DefaultTarget(), "mid", 2e-3),
              OkRecord("w", DefaultTarget(), "tie", 2e-3),
              OkRecord("other", DefaultTarget(), "faster", 1e-6)});
  absl::StatusOr<std::optional<Match>> best = db_->Best("w", DefaultTarget());
  ASSERT_TRUE(best.ok()) << best.status();
  ASSERT_TRUE(best->has_value());
  EXPECT_EQ((*best)->record.structural_hash(), "fast");
  EXPECT_TRUE((*best)->exact);
  EXPECT_EQ((*best)->difference, "");
  EXPECT_GT((*best)->record.id(), 0);

  absl::StatusOr<std::vector<Match>> top = db_->Top("w", DefaultTarget(), 3);
  ASSERT_TRUE(top.ok()) << top.status();
  std::vector<std::string> hashes;
  for (const Match& match : *top)
    hashes.push_back(match.record.structural_hash());
  // Ties go to the earlier record.
  EXPECT_EQ(hashes, (std::vector<std::string>{"fast", "mid", "tie"}));

  top = db_->Top("w", DefaultTarget(), 100);
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(top->size(), 4u);
  top = db_->Top("w", DefaultTarget(), 0);
  ASSERT_TRUE(top.ok());
  EXPECT_TRUE(top->empty());
}

TEST_F(DatabaseTest, AProgramCountsByItsLatestMeasurement) {
  // "lucky" was measured fast once; measured again it is slower than
  // "steady": the re-measurement decides, and each program is listed once.
  MustCommit({OkRecord("w", DefaultTarget(), "lucky", 1e-3),
              OkRecord("w", DefaultTarget(), "steady", 2e-3)});
  MustCommit({OkRecord("w", DefaultTarget(), "lucky", 3e-3)});
  absl::StatusOr<std::vector<Match>> top = db_->Top("w", DefaultTarget(), 10);
  ASSERT_TRUE(top.ok()) << top.status();
  ASSERT_EQ(top->size(), 2u);
  EXPECT_EQ((*top)[0].record.structural_hash(), "steady");
  EXPECT_EQ((*top)[1].record.structural_hash(), "lucky");
  EXPECT_DOUBLE_EQ((*top)[1].record.median_s(), 3e-3);
  // A latest measurement that failed withdraws the program.
  MustCommit({MakeRecord("w", DefaultTarget(), "steady", {},
                         proto::MEASURE_RUN_ERROR)});
  absl::StatusOr<std::optional<Match>> best = db_->Best("w", DefaultTarget());
  ASSERT_TRUE(best.ok() && best->has_value());
  EXPECT_EQ((*best)->record.structural_hash(), "lucky");
}

TEST_F(DatabaseTest, FailedRecordsAreNeverBestEvenWhenFaster) {
  MustCommit(
      {MakeRecord("w", DefaultTarget(), "wrong", {1e-6, 1e-6, 1e-6},
                  proto::MEASURE_WRONG_RESULT),
       MakeRecord("w", DefaultTarget(), "crash", {1e-6},
                  proto::MEASURE_RUN_ERROR),
       MakeRecord("w", DefaultTarget(), "slow", {5e-6}, proto::MEASURE_TIMEOUT),
       OkRecord("w", DefaultTarget(), "ok", 1e-3)});
  absl::StatusOr<std::vector<Match>> top = db_->Top("w", DefaultTarget(), 10);
  ASSERT_TRUE(top.ok()) << top.status();
  ASSERT_EQ(top->size(), 1u);
  EXPECT_EQ((*top)[0].record.structural_hash(), "ok");

  MustCommit({MakeRecord("only-failed", DefaultTarget(), "wrong", {1e-6},
                         proto::MEASURE_WRONG_RESULT)});
  absl::StatusOr<std::optional<Match>> best =
      db_->Best("only-failed", DefaultTarget());
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_FALSE(best->has_value());
  best = db_->Best("only-failed", DefaultTarget(), TargetMatching::kCompatible);
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_FALSE(best->has_value());
}

TEST_F(DatabaseTest, UnknownWorkloadOrTargetHasNoBest) {
  MustCommit({OkRecord("w", DefaultTarget(), "h", 1e-3)});
  absl::StatusOr<std::optional<Match>> best =
      db_->Best("unknown", DefaultTarget());
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_FALSE(best->has_value());
  best = db_->Best("w", MakeTarget("icelake", {"avx512f"}, 4));
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_FALSE(best->has_value());
}

TEST_F(DatabaseTest, LookupsMatchTargetsExactlyByDefault) {
  const proto::TargetInfo two_threads =
      MakeTarget("znver4", {"avx2", "fma"}, 2);
  MustCommit({OkRecord("w", two_threads, "h", 1e-3)});
  absl::StatusOr<std::optional<Match>> best = db_->Best("w", DefaultTarget());
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_FALSE(best->has_value());
  absl::StatusOr<std::vector<Match>> top = db_->Top("w", DefaultTarget(), 5);
  ASSERT_TRUE(top.ok()) << top.status();
  EXPECT_TRUE(top->empty());
}

TEST_F(DatabaseTest, CompatibleMatchingAnswersFromAnotherThreadCountAndSaysSo) {
  const proto::TargetInfo two_threads =
      MakeTarget("znver4", {"avx2", "fma"}, 2);
  MustCommit({OkRecord("w", two_threads, "h", 1e-3)});
  absl::StatusOr<std::optional<Match>> best =
      db_->Best("w", DefaultTarget(), TargetMatching::kCompatible);
  ASSERT_TRUE(best.ok()) << best.status();
  ASSERT_TRUE(best->has_value());
  EXPECT_FALSE((*best)->exact);
  EXPECT_EQ((*best)->record.target().canonical(), two_threads.canonical());
  EXPECT_NE((*best)->difference.find("measured with 2 threads, asked for 4"),
            std::string::npos)
      << (*best)->difference;
}

TEST_F(DatabaseTest, CompatibleMatchingAcceptsFewerFeaturesAndAnotherCpu) {
  const proto::TargetInfo wanted =
      MakeTarget("znver4", {"avx2", "avx512f", "fma"}, 4);
  const proto::TargetInfo older = MakeTarget("haswell", {"avx2", "fma"}, 8);
  MustCommit({OkRecord("w", older, "h", 1e-3)});
  absl::StatusOr<std::optional<Match>> best =
      db_->Best("w", wanted, TargetMatching::kCompatible);
  ASSERT_TRUE(best.ok()) << best.status();
  ASSERT_TRUE(best->has_value());
  EXPECT_FALSE((*best)->exact);
  EXPECT_NE((*best)->difference.find("cpu haswell, asked for znver4"),
            std::string::npos)
      << (*best)->difference;
}

TEST_F(DatabaseTest, CompatibleMatchingNeverAnswersFromAnIncompatibleTarget) {
  const proto::TargetInfo wanted = MakeTarget("haswell", {"avx2", "fma"}, 4);
  // Uses a feature the asked-for target lacks, however fast.
  const proto::TargetInfo more_features =
      MakeTarget("haswell", {"avx2", "avx512f", "fma"}, 4);
  // Another kind with the same features.
  const proto::TargetInfo cuda =
      MakeTarget("haswell", {"avx2", "fma"}, 4, "cuda");
  MustCommit({OkRecord("w", more_features, "h1", 1e-6),
              OkRecord("w", cuda, "h2", 1e-6)});
  absl::StatusOr<std::optional<Match>> best =
      db_->Best("w", wanted, TargetMatching::kCompatible);
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_FALSE(best->has_value()) << (*best)->record.target().canonical();
  absl::StatusOr<std::vector<Match>> top =
      db_->Top("w", wanted, 10, TargetMatching::kCompatible);
  ASSERT_TRUE(top.ok()) << top.status();
  EXPECT_TRUE(top->empty());
}

TEST_F(DatabaseTest, CompatibleMatchingPrefersTheExactTargetEvenWhenSlower) {
  const proto::TargetInfo two_threads =
      MakeTarget("znver4", {"avx2", "fma"}, 2);
  MustCommit({OkRecord("w", two_threads, "compatible", 1e-6),
              OkRecord("w", DefaultTarget(), "exact", 1e-3)});
  absl::StatusOr<std::optional<Match>> best =
      db_->Best("w", DefaultTarget(), TargetMatching::kCompatible);
  ASSERT_TRUE(best.ok()) << best.status();
  ASSERT_TRUE(best->has_value());
  EXPECT_TRUE((*best)->exact);
  EXPECT_EQ((*best)->difference, "");
  EXPECT_EQ((*best)->record.structural_hash(), "exact");
}

TEST_F(DatabaseTest, CompatibleMatchingTakesTheClosestTargetWithAnOkRecord) {
  const proto::TargetInfo wanted =
      MakeTarget("znver4", {"avx2", "avx512f", "fma"}, 4);
  const proto::TargetInfo same_threads =
      MakeTarget("haswell", {"avx2", "fma"}, 4);
  const proto::TargetInfo same_cpu = MakeTarget("znver4", {"avx2", "fma"}, 16);
  MustCommit(
      {OkRecord("w", same_cpu, "same-cpu", 1e-6),
       OkRecord("w", same_threads, "same-threads", 1e-3),
       // The exact target has only a failed record: it cannot answer.
       MakeRecord("w", wanted, "broken", {1e-9}, proto::MEASURE_WRONG_RESULT)});
  absl::StatusOr<std::optional<Match>> best =
      db_->Best("w", wanted, TargetMatching::kCompatible);
  ASSERT_TRUE(best.ok()) << best.status();
  ASSERT_TRUE(best->has_value());
  EXPECT_FALSE((*best)->exact);
  EXPECT_EQ((*best)->record.structural_hash(), "same-threads");
}

// Reading records

TEST_F(DatabaseTest, RecordsOfTaskAndOfJobListEveryStatusInCommitOrder) {
  proto::Record a = OkRecord("w", DefaultTarget(), "h1", 1e-3);
  proto::Record b =
      MakeRecord("w", DefaultTarget(), "h2", {}, proto::MEASURE_BUILD_ERROR);
  proto::Record c =
      OkRecord("w", MakeTarget("znver4", {"avx2"}, 1), "h3", 1e-3);
  proto::Record d = OkRecord("v", DefaultTarget(), "h4", 1e-3);
  a.set_job("j1");
  b.set_job("j2");
  c.set_job("j1");
  MustCommit({a, b});
  MustCommit({c, d});

  std::vector<proto::Record> task = Task("w", DefaultTarget());
  ASSERT_EQ(task.size(), 2u);
  EXPECT_EQ(task[0].structural_hash(), "h1");
  EXPECT_EQ(task[1].structural_hash(), "h2");
  EXPECT_EQ(task[1].status(), proto::MEASURE_BUILD_ERROR);

  absl::StatusOr<std::vector<proto::Record>> job = db_->RecordsOfJob("j1");
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_EQ(job->size(), 2u);
  EXPECT_EQ((*job)[0].structural_hash(), "h1");
  EXPECT_EQ((*job)[1].structural_hash(), "h3");
  job = db_->RecordsOfJob("no-such-job");
  ASSERT_TRUE(job.ok());
  EXPECT_TRUE(job->empty());
  EXPECT_TRUE(Task("nothing", DefaultTarget()).empty());
}

TEST_F(DatabaseTest, IsMeasuredAndMeasuredHashesCoverEveryStatusOfTheTask) {
  MustCommit(
      {OkRecord("w", DefaultTarget(), "ok", 1e-3),
       MakeRecord("w", DefaultTarget(), "crashed", {},
                  proto::MEASURE_RUN_ERROR),
       OkRecord("w", DefaultTarget(), "ok", 2e-3),  // measured twice
       OkRecord("w", MakeTarget("znver4", {"avx2"}, 1), "elsewhere", 1e-3)});
  const std::string target = DefaultTarget().canonical();
  for (const char* hash : {"ok", "crashed"}) {
    absl::StatusOr<bool> measured = db_->IsMeasured("w", target, hash);
    ASSERT_TRUE(measured.ok()) << measured.status();
    EXPECT_TRUE(*measured) << hash;
  }
  EXPECT_FALSE(*db_->IsMeasured("w", target, "elsewhere"));
  EXPECT_FALSE(*db_->IsMeasured("w", target, "never"));
  EXPECT_FALSE(*db_->IsMeasured("unknown", target, "ok"));

  absl::StatusOr<std::vector<std::string>> hashes =
      db_->MeasuredHashes("w", target);
  ASSERT_TRUE(hashes.ok()) << hashes.status();
  std::sort(hashes->begin(), hashes->end());
  EXPECT_EQ(*hashes, (std::vector<std::string>{"crashed", "ok"}));
}

TEST_F(DatabaseTest, TasksSummarizeEveryWorkloadAndTargetPair) {
  const proto::TargetInfo one = MakeTarget("znver4", {"avx2"}, 1);
  MustCommit({OkRecord("a", DefaultTarget(), "h1", 3e-3),
              OkRecord("a", DefaultTarget(), "h2", 2e-3),
              MakeRecord("a", DefaultTarget(), "h3", {1e-6},
                         proto::MEASURE_WRONG_RESULT),
              MakeRecord("a", one, "h4", {}, proto::MEASURE_BUILD_ERROR),
              OkRecord("b", one, "h5", 1e-3)});
  absl::StatusOr<std::vector<TaskSummary>> tasks = db_->Tasks();
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 3u);
  std::map<std::pair<std::string, std::string>, TaskSummary> by_key;
  for (const TaskSummary& task : *tasks)
    by_key[{task.workload_key, task.target}] = task;
  const TaskSummary& a = by_key[{"a", DefaultTarget().canonical()}];
  EXPECT_EQ(a.workload, testing::WorkloadForm("a"));
  EXPECT_EQ(a.records, 3);
  EXPECT_EQ(a.ok_records, 2);
  ASSERT_TRUE(a.best_median_s.has_value());
  EXPECT_EQ(*a.best_median_s, 2e-3);
  const TaskSummary& a_one = by_key[{"a", one.canonical()}];
  EXPECT_EQ(a_one.records, 1);
  EXPECT_EQ(a_one.ok_records, 0);
  EXPECT_FALSE(a_one.best_median_s.has_value());
  EXPECT_EQ((by_key[{"b", one.canonical()}].records), 1);
}

TEST_F(DatabaseTest, StatsCountEverything) {
  proto::Record a = OkRecord("a", DefaultTarget(), "h1", 1e-3);
  a.set_job("j");
  MustCommit({a, OkRecord("a", DefaultTarget(), "h2", 1e-3),
              MakeRecord("b", MakeTarget("znver4", {}, 1), "h3", {},
                         proto::MEASURE_TIMEOUT),
              MakeRecord("b", DefaultTarget(), "h4", {1e-3},
                         proto::MEASURE_WRONG_RESULT)});
  absl::StatusOr<Stats> stats = db_->GetStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->schema_version, Database::CurrentSchemaVersion());
  EXPECT_EQ(stats->workloads, 2);
  EXPECT_EQ(stats->targets, 2);
  EXPECT_EQ(stats->tasks, 3);
  EXPECT_EQ(stats->jobs, 1);
  EXPECT_EQ(stats->records, 4);
  ASSERT_EQ(stats->records_by_status.size(),
            static_cast<size_t>(proto::MeasureStatus_ARRAYSIZE));
  EXPECT_EQ(stats->records_by_status[proto::MEASURE_OK], 2);
  EXPECT_EQ(stats->records_by_status[proto::MEASURE_TIMEOUT], 1);
  EXPECT_EQ(stats->records_by_status[proto::MEASURE_WRONG_RESULT], 1);
  EXPECT_EQ(stats->records_by_status[proto::MEASURE_RUN_ERROR], 0);
  EXPECT_GT(stats->file_bytes, 0);
}

TEST_F(DatabaseTest, ForEachRecordVisitsInCommitOrderAndStopsAtAnError) {
  for (int i = 0; i < 4; ++i) {
    MustCommit({OkRecord("w", DefaultTarget(), absl::StrCat("h", i), 1e-3)});
  }
  std::vector<std::string> seen;
  absl::Status visited = db_->ForEachRecord([&](const proto::Record& record) {
    seen.push_back(record.structural_hash());
    return absl::OkStatus();
  });
  ASSERT_TRUE(visited.ok()) << visited;
  EXPECT_EQ(seen, (std::vector<std::string>{"h0", "h1", "h2", "h3"}));

  seen.clear();
  visited = db_->ForEachRecord([&](const proto::Record& record) {
    seen.push_back(record.structural_hash());
    return seen.size() == 2 ? absl::CancelledError("enough") : absl::OkStatus();
  });
  EXPECT_EQ(visited.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(seen.size(), 2u);
  // Nothing is left open: a batch commits after the early stop.
  EXPECT_EQ(MustCommit({OkRecord("w", DefaultTarget(), "h9", 1e-3)}).added, 1);
}

TEST_F(DatabaseTest, ForEachRecordVisitorMayRunOtherQueries) {
  MustCommit({OkRecord("w", DefaultTarget(), "h1", 2e-3),
              OkRecord("w", DefaultTarget(), "h2", 1e-3)});
  int bests = 0;
  absl::Status visited =
      db_->ForEachRecord([&](const proto::Record& record) -> absl::Status {
        absl::StatusOr<std::optional<Match>> best =
            db_->Best(record.workload_key(), record.target());
        if (!best.ok()) return best.status();
        if (best->has_value() && (*best)->record.structural_hash() == "h2")
          ++bests;
        absl::StatusOr<Stats> stats = db_->GetStats();
        if (!stats.ok()) return stats.status();
        absl::StatusOr<bool> measured =
            db_->IsMeasured("w", DefaultTarget().canonical(), "h1");
        return measured.status();
      });
  EXPECT_TRUE(visited.ok()) << visited;
  EXPECT_EQ(bests, 2);
}

// ContentStamp

TEST_F(DatabaseTest, ContentStampChangesWithTheRecordsAndOnlyWithThem) {
  absl::StatusOr<std::string> empty = db_->ContentStamp();
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_NE(empty->find(" records 0 "), std::string::npos) << *empty;
  MustCommit({OkRecord("a", DefaultTarget(), "fast", 1e-3)});
  const std::string one = *db_->ContentStamp();
  EXPECT_NE(one, *empty);
  EXPECT_EQ(*db_->ContentStamp(), one);  // reading changes nothing
  // A job row, a cost model or a commit of a duplicate are not records
  // a lookup answers from.
  proto::Job job;
  job.set_id("j");
  job.set_state("running");
  ASSERT_TRUE(db_->PutJob(job).ok());
  MustCommit({OkRecord("a", DefaultTarget(), "fast", 1e-3)});
  EXPECT_EQ(*db_->ContentStamp(), one);
  MustCommit({OkRecord("a", DefaultTarget(), "mid", 2e-3)});
  const std::string two = *db_->ContentStamp();
  EXPECT_NE(two, one);
  ASSERT_EQ(*db_->Prune(1), 1);
  EXPECT_NE(*db_->ContentStamp(), two);

  // The same records committed into another file in the same order: the
  // same stamp (it is what a lookup answers from, not where the file is).
  TempFolder other_folder;
  absl::StatusOr<std::unique_ptr<Database>> other =
      Database::Open(other_folder.File("other.db"), CreateMode());
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE(
      (*other)->Commit({OkRecord("a", DefaultTarget(), "fast", 1e-3)}).ok());
  EXPECT_EQ(*(*other)->ContentStamp(), one);
}

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
