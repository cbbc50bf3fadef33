// Tests of database/merge.h: combining the databases of CI shards.
#include "database/merge.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sqlite3.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/database/test_records.h"

namespace lathe::db {
namespace {

using testing::Bytes;
using testing::CreateDatabase;
using testing::CreateMode;
using testing::DefaultTarget;
using testing::FileExists;
using testing::MakeRecord;
using testing::OkRecord;
using testing::ReadFile;
using testing::TempFolder;
using testing::WithoutId;
using testing::WriteFile;

bool Contains(const absl::Status& status, absl::string_view text) {
  return status.message().find(text) != absl::string_view::npos;
}

proto::Record ShardRecord(const std::string& shard, const std::string& hash,
                          double median_s) {
  proto::Record record = OkRecord("w", DefaultTarget(), hash, median_s);
  record.set_runner(absl::StrCat("ci:", shard));
  record.set_job(absl::StrCat("job-", shard));
  return record;
}

// Runs SQL on a database file behind the Database class's back (to
// damage or age a source).
void ExecSql(const std::string& path, const char* sql) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  const int rc = sqlite3_exec(raw, sql, nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  ASSERT_EQ(rc, SQLITE_OK) << sql;
}

std::vector<std::string> Fingerprints(Database& db) {
  std::vector<std::string> out;
  EXPECT_TRUE(db.ForEachRecord([&](const proto::Record& record) {
                  out.push_back(Fingerprint(record));
                  return absl::OkStatus();
                }).ok());
  return out;
}

class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Shard a measured h1, h2 and the shared record; shard b h3 and the
    // shared one (a record both shards hold, as when a shard's export was
    // imported into another).
    const proto::Record shared = ShardRecord("a", "shared", 5e-3);
    shard_a_ = {ShardRecord("a", "h1", 1e-3), ShardRecord("a", "h2", 2e-3),
                shared};
    shard_b_ = {
        shared, ShardRecord("b", "h3", 3e-3),
        MakeRecord("w", DefaultTarget(), "h4", {}, proto::MEASURE_BUILD_ERROR)};
    shard_b_.back().set_runner("ci:b");
    ASSERT_TRUE(CreateDatabase(folder_.File("a.db"), shard_a_).ok());
    ASSERT_TRUE(CreateDatabase(folder_.File("b.db"), shard_b_).ok());
    {
      absl::StatusOr<std::unique_ptr<Database>> a =
          Database::Open(folder_.File("a.db"), testing::ReadWriteMode());
      ASSERT_TRUE(a.ok());
      proto::Job job;
      job.set_id("job-a");
      job.set_description("shard a of the nightly tuning");
      job.set_state("done");
      job.set_created_at_unix_ms(42);
      ASSERT_TRUE((*a)->PutJob(job).ok());
    }
    absl::StatusOr<std::unique_ptr<Database>> dest =
        Database::Open(folder_.File("dest.db"), CreateMode());
    ASSERT_TRUE(dest.ok()) << dest.status();
    dest_ = *std::move(dest);
    ASSERT_TRUE(dest_->Commit({ShardRecord("dest", "h0", 9e-3)}).ok());
  }

  TempFolder folder_;
  std::vector<proto::Record> shard_a_, shard_b_;
  std::unique_ptr<Database> dest_;
};

TEST_F(MergeTest, TakesTheUnionDroppingExactDuplicatesAndKeepsProvenance) {
  const std::string a_bytes = ReadFile(folder_.File("a.db"));
  const std::string b_bytes = ReadFile(folder_.File("b.db"));
  absl::StatusOr<CommitResult> merged =
      MergeInto(*dest_, {folder_.File("a.db"), folder_.File("b.db")});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->added, 5);
  EXPECT_EQ(merged->duplicates, 1);

  std::vector<proto::Record> all;
  ASSERT_TRUE(dest_
                  ->ForEachRecord([&](const proto::Record& record) {
                    all.push_back(WithoutId(record));
                    return absl::OkStatus();
                  })
                  .ok());
  // The destination's own record, then shard a's, then what b added.
  const std::vector<proto::Record> expected = {ShardRecord("dest", "h0", 9e-3),
                                               shard_a_[0],
                                               shard_a_[1],
                                               shard_a_[2],
                                               shard_b_[1],
                                               shard_b_[2]};
  ASSERT_EQ(all.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(Bytes(all[i]), Bytes(expected[i]))
        << i << ": " << all[i].DebugString();
  }

  // Jobs come along with what their source said of them.
  absl::StatusOr<std::vector<proto::Job>> jobs = dest_->Jobs();
  ASSERT_TRUE(jobs.ok());
  std::map<std::string, proto::Job> by_id;
  for (const proto::Job& job : *jobs) by_id[job.id()] = job;
  ASSERT_EQ(by_id.size(), 3u) << jobs->size();
  EXPECT_EQ(by_id["job-a"].description(), "shard a of the nightly tuning");
  EXPECT_EQ(by_id["job-a"].state(), "done");
  // PutJob keeps a job's creation time: job-a was created by its records.
  EXPECT_EQ(by_id["job-a"].created_at_unix_ms(),
            shard_a_[0].measured_at_unix_ms());
  EXPECT_TRUE(by_id.count("job-b"));

  absl::StatusOr<CheckReport> check = dest_->Check();
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->ok()) << absl::StrJoin(check->problems, "\n");
  // The sources are only read.
  EXPECT_EQ(ReadFile(folder_.File("a.db")), a_bytes);
  EXPECT_EQ(ReadFile(folder_.File("b.db")), b_bytes);

  // Merging again adds nothing.
  merged = MergeInto(*dest_, {folder_.File("a.db"), folder_.File("b.db")});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->added, 0);
  EXPECT_EQ(merged->duplicates, 6);
}

TuningBatch BatchOf(const std::string& job, const std::string& workload,
                    int64_t finished_ms, std::optional<double> accuracy) {
  TuningBatch batch;
  batch.job = job;
  batch.workload_key = workload;
  batch.target = DefaultTarget().canonical();
  batch.finished_ms = finished_ms;
  batch.trials = 4;
  batch.accuracy = accuracy;
  return batch;
}

void AddBatches(const std::string& path,
                const std::vector<TuningBatch>& batches) {
  absl::StatusOr<std::unique_ptr<Database>> db =
      Database::Open(path, testing::ReadWriteMode());
  ASSERT_TRUE(db.ok()) << db.status();
  for (const TuningBatch& batch : batches) {
    absl::StatusOr<CommitResult> added = (*db)->Commit({}, &batch);
    ASSERT_TRUE(added.ok()) << added.status();
  }
}

// (finished_ms, index) of each batch.
std::vector<std::pair<int64_t, int64_t>> TimesAndIndices(
    const std::vector<TuningBatch>& batches) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const TuningBatch& b : batches) out.emplace_back(b.finished_ms, b.index);
  return out;
}

using Pairs = std::vector<std::pair<int64_t, int64_t>>;

TEST_F(MergeTest, CarriesBatchesNumberedAfterTheDestinationsOwnAndOnlyOnce) {
  // Shard a: two batches of job-a, and one of a task whose records were
  // all pruned (in no report, and not carried).
  {
    absl::StatusOr<std::unique_ptr<Database>> a =
        Database::Open(folder_.File("a.db"), testing::ReadWriteMode());
    ASSERT_TRUE(a.ok());
    ASSERT_TRUE((*a)->Commit({MakeRecord("gone", DefaultTarget(), "g", {},
                                         proto::MEASURE_BUILD_ERROR)})
                    .ok());
    ASSERT_EQ((*a)->Prune(10).value(), 1);
  }
  AddBatches(folder_.File("a.db"), {BatchOf("job-a", "w", 1000, std::nullopt),
                                    BatchOf("job-a", "w", 2000, 0.6),
                                    BatchOf("job-a", "gone", 2500, 0.6)});
  // Shard b ran job-a too, and job-b.
  AddBatches(folder_.File("b.db"), {BatchOf("job-a", "w", 3000, 0.7),
                                    BatchOf("job-b", "w", 4000, 0.8)});
  // The destination holds a batch of job-a already.
  const TuningBatch own = BatchOf("job-a", "w", 500, 0.5);
  ASSERT_TRUE(dest_->Commit({}, &own).ok());

  absl::StatusOr<CommitResult> merged =
      MergeInto(*dest_, {folder_.File("a.db"), folder_.File("b.db")});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->batches_added, 4);
  EXPECT_EQ(merged->batch_duplicates, 0);
  const std::string target = DefaultTarget().canonical();
  // Each job's batches 0..n-1, in order: the destination's, then each
  // source's in its order.
  std::vector<TuningBatch> job_a = *dest_->Batches("w", target, "job-a");
  EXPECT_EQ(TimesAndIndices(job_a),
            (Pairs{{500, 0}, {1000, 1}, {2000, 2}, {3000, 3}}));
  EXPECT_FALSE(job_a[1].accuracy.has_value());
  EXPECT_EQ(job_a[2].accuracy.value_or(0), 0.6);
  EXPECT_EQ(job_a[3].trials, 4);
  EXPECT_EQ(TimesAndIndices(*dest_->Batches("w", target, "job-b")),
            (Pairs{{4000, 0}}));
  EXPECT_TRUE(dest_->Batches("gone", target)->empty());

  // Merging again adds no batch either.
  merged = MergeInto(*dest_, {folder_.File("a.db"), folder_.File("b.db")});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->batches_added, 0);
  EXPECT_EQ(merged->batch_duplicates, 4);
  EXPECT_EQ(dest_->Batches("w", target)->size(), 5u);
}

TEST_F(MergeTest, ASourceFromBeforeBatchesMergesWithoutThem) {
  AddBatches(folder_.File("a.db"), {BatchOf("job-a", "w", 1000, 0.6)});
  // b.db as schema version 3 wrote it: no table batches.
  ASSERT_NO_FATAL_FAILURE(ExecSql(
      folder_.File("b.db"), "DROP TABLE batches; PRAGMA user_version = 3"));
  absl::StatusOr<CommitResult> merged =
      MergeInto(*dest_, {folder_.File("a.db"), folder_.File("b.db")});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->added, 5);
  EXPECT_EQ(merged->batches_added, 1);
  EXPECT_EQ(dest_->Batches("w", DefaultTarget().canonical())->size(), 1u);
}

TEST_F(MergeTest, RefusesToMergeADatabaseIntoItself) {
  const std::vector<std::string> before = Fingerprints(*dest_);
  for (const std::string& self :
       {folder_.File("dest.db"), folder_.path() + "/./dest.db"}) {
    absl::StatusOr<CommitResult> merged =
        MergeInto(*dest_, {folder_.File("a.db"), self});
    ASSERT_FALSE(merged.ok()) << self;
    EXPECT_EQ(merged.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(Contains(merged.status(), "itself")) << merged.status();
  }
  EXPECT_EQ(Fingerprints(*dest_), before);
}

TEST_F(MergeTest, AnUnreadableSourceLeavesTheDestinationAsItWas) {
  WriteFile(folder_.File("notes.db"),
            "not a database at all, just some notes\n");
  const std::vector<std::string> before = Fingerprints(*dest_);
  for (const std::string& bad :
       {folder_.File("notes.db"), folder_.File("missing.db")}) {
    absl::StatusOr<CommitResult> merged =
        MergeInto(*dest_, {folder_.File("a.db"), bad});
    ASSERT_FALSE(merged.ok()) << bad;
    EXPECT_TRUE(Contains(merged.status(), bad)) << merged.status();
    EXPECT_EQ(Fingerprints(*dest_), before);
    EXPECT_EQ(dest_->GetStats()->jobs, 1);
  }
  EXPECT_FALSE(FileExists(folder_.File("missing.db")));
}

TEST_F(MergeTest, ASourceBrokenPartWayLeavesTheDestinationAsItWas) {
  // b.db opens but its second record's trace is damaged: the merge fails
  // after a.db's records went into the open transaction.
  ASSERT_NO_FATAL_FAILURE(
      ExecSql(folder_.File("b.db"),
              "UPDATE records SET trace = x'ffffffff' WHERE id = 2"));
  const std::vector<std::string> before = Fingerprints(*dest_);
  absl::StatusOr<CommitResult> merged =
      MergeInto(*dest_, {folder_.File("a.db"), folder_.File("b.db")});
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().code(), absl::StatusCode::kDataLoss)
      << merged.status();
  EXPECT_TRUE(Contains(merged.status(), folder_.File("b.db")))
      << merged.status();
  EXPECT_EQ(Fingerprints(*dest_), before);
  absl::StatusOr<std::vector<proto::Job>> jobs = dest_->Jobs();
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ(jobs->size(), 1u);
}

}  // namespace
}  // namespace lathe::db

namespace lathe::db {
namespace {

class MergeChecksTest : public MergeTest {};

TEST_F(MergeChecksTest, AppliesTheImportCheckToEveryRecord) {
  const std::vector<std::string> before = Fingerprints(*dest_);
  auto refuse_h3 = [](const proto::Record& record) {
    return record.structural_hash() == "h3"
               ? absl::InvalidArgumentError("structural_hash h3 is refused")
               : absl::OkStatus();
  };
  absl::StatusOr<CommitResult> merged = MergeInto(
      *dest_, {folder_.File("a.db"), folder_.File("b.db")}, refuse_h3);
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(merged.status(), folder_.File("b.db")))
      << merged.status();
  EXPECT_TRUE(Contains(merged.status(), "structural_hash h3 is refused"))
      << merged.status();
  EXPECT_EQ(Fingerprints(*dest_), before);
}

TEST_F(MergeChecksTest, RefusesAnInvalidBatchRowOfASource) {
  AddBatches(folder_.File("b.db"), {BatchOf("job-b", "w", 1000, 0.5)});
  ASSERT_NO_FATAL_FAILURE(
      ExecSql(folder_.File("b.db"), "UPDATE batches SET accuracy = 7"));
  const std::vector<std::string> before = Fingerprints(*dest_);
  absl::StatusOr<CommitResult> merged =
      MergeInto(*dest_, {folder_.File("a.db"), folder_.File("b.db")});
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(merged.status(), folder_.File("b.db")))
      << merged.status();
  EXPECT_TRUE(Contains(merged.status(), "accuracy is 7")) << merged.status();
  EXPECT_EQ(Fingerprints(*dest_), before);
  EXPECT_TRUE(dest_->Batches("w", DefaultTarget().canonical())->empty());
}

TEST_F(MergeChecksTest, RefusesAStoredTraceBeyondTheLimits) {
  // A record whose trace splits a loop into 100,000 factors, written into
  // b.db behind the database's back (a file from an older Lathe, or edited).
  proto::Trace trace;
  trace.set_format_version(1);
  proto::TraceInstruction* split = trace.add_instructions();
  split->set_kind("split");
  for (int i = 0; i < 100000; ++i) split->add_inputs()->set_int_value(1);
  const std::string bytes = SerializeTrace(trace);
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(folder_.File("b.db").c_str(), &raw), SQLITE_OK);
    sqlite3_stmt* statement = nullptr;
    ASSERT_EQ(
        sqlite3_prepare_v2(raw, "UPDATE records SET trace = ? WHERE id = 2", -1,
                           &statement, nullptr),
        SQLITE_OK);
    sqlite3_bind_blob(statement, 1, bytes.data(),
                      static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
    ASSERT_EQ(sqlite3_step(statement), SQLITE_DONE);
    sqlite3_finalize(statement);
    sqlite3_close(raw);
  }
  const std::vector<std::string> before = Fingerprints(*dest_);
  absl::StatusOr<CommitResult> merged =
      MergeInto(*dest_, {folder_.File("a.db"), folder_.File("b.db")});
  ASSERT_FALSE(merged.ok());
  EXPECT_TRUE(Contains(merged.status(), "kMaxSplitFactors")) << merged.status();
  EXPECT_EQ(Fingerprints(*dest_), before);
  // `db check` reports it.
  absl::StatusOr<std::unique_ptr<Database>> b = Database::Open(
      folder_.File("b.db"), OpenOptions{.mode = OpenOptions::Mode::kReadOnly});
  ASSERT_TRUE(b.ok()) << b.status();
  absl::StatusOr<CheckReport> report = (*b)->Check();
  ASSERT_TRUE(report.ok()) << report.status();
  bool reported = false;
  for (const std::string& problem : report->problems) {
    reported |= problem.find("kMaxSplitFactors") != std::string::npos;
  }
  EXPECT_TRUE(reported);
}

}  // namespace
}  // namespace lathe::db
