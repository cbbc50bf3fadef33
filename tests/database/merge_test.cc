// Tests of database/merge.h: combining the databases of CI shards.
#include "database/merge.h"

#include <map>
#include <memory>
#include <string>
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
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(folder_.File("b.db").c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(
        sqlite3_exec(raw, "UPDATE records SET trace = x'ffffffff' WHERE id = 2",
                     nullptr, nullptr, nullptr),
        SQLITE_OK);
    sqlite3_close(raw);
  }
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
