// Tests of database/database.h under faults: damaged and foreign files, a
// read-only file (readers and writers in other processes are in
// faults_processes_test.cc, full disks in faults_disk_test.cc; the helpers
// in faults_helpers.h).
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "database/database.h"
#include "gtest/gtest.h"
#include "tests/database/faults_helpers.h"
#include "tests/database/test_records.h"

namespace lathe::db {
namespace {

using testing::Batch;
using testing::BatchCounts;
using testing::CreateDatabase;
using testing::CreateMode;
using testing::DefaultTarget;
using testing::ExpectRefusedAndUntouched;
using testing::FileExists;
using testing::IncompleteBatches;
using testing::MakeBigDatabase;
using testing::RawSql;
using testing::ReadFile;
using testing::ReadOnlyMode;
using testing::ReadWriteMode;
using testing::StartChild;
using testing::TempFolder;
using testing::WaitChild;
using testing::WriteFile;

// Damaged and foreign files

TEST(Faults, ATruncatedDatabaseIsRefusedAndLeftAlone) {
  TempFolder folder;
  const std::string path = MakeBigDatabase(folder, "lathe.db");
  const std::string bytes = ReadFile(path);
  WriteFile(path, bytes.substr(0, bytes.size() / 2));
  ExpectRefusedAndUntouched(path, absl::StatusCode::kDataLoss, "truncated");
  // Cut inside a page, too.
  WriteFile(path, bytes.substr(0, bytes.size() - 1000));
  ExpectRefusedAndUntouched(path, absl::StatusCode::kDataLoss, "truncated");
}

TEST(Faults, ATextFileIsRefusedAndLeftAlone) {
  TempFolder folder;
  const std::string path = folder.File("lathe.db");
  WriteFile(path, "workload,target,median\nmatmul,znver4,0.001\n");
  ExpectRefusedAndUntouched(path, absl::StatusCode::kDataLoss,
                            "not a Lathe database");
}

TEST(Faults, AnotherApplicationsSqliteFileIsRefusedAndLeftAlone) {
  TempFolder folder;
  const std::string rollback = folder.File("other.db");
  RawSql(
      rollback,
      "CREATE TABLE customers(name TEXT); INSERT INTO customers VALUES('ada')");
  ExpectRefusedAndUntouched(rollback, absl::StatusCode::kFailedPrecondition,
                            "not a Lathe database");

  // In WAL mode SQLite creates -wal and -shm beside a file just to read it.
  const std::string wal = folder.File("other-wal.db");
  RawSql(wal, "PRAGMA journal_mode = WAL; CREATE TABLE customers(name TEXT)");
  ASSERT_FALSE(FileExists(wal + "-wal"));
  ExpectRefusedAndUntouched(wal, absl::StatusCode::kFailedPrecondition,
                            "not a Lathe database");

  // Another application that set its own application id.
  const std::string tagged = folder.File("tagged.db");
  RawSql(tagged,
         "PRAGMA application_id = 1234; PRAGMA user_version = 1; VACUUM");
  ExpectRefusedAndUntouched(tagged, absl::StatusCode::kFailedPrecondition,
                            "application_id 1234");
}

TEST(Faults, ADatabaseOfANewerSchemaIsRefusedAndLeftAlone) {
  TempFolder folder;
  const std::string path = MakeBigDatabase(folder, "lathe.db");
  RawSql(path, absl::StrCat("PRAGMA user_version = ",
                            Database::CurrentSchemaVersion() + 1));
  ASSERT_FALSE(FileExists(path + "-wal"));
  ExpectRefusedAndUntouched(
      path, absl::StatusCode::kFailedPrecondition,
      absl::StrCat("schema version ", Database::CurrentSchemaVersion() + 1,
                   " is newer"));
}

TEST(Faults, ANewerSchemaStillInTheLogIsRefusedToo) {
  // The file's own header is stale while the newer first page sits in the
  // log of a connection that keeps it open: SQLite's view must decide.
  TempFolder folder;
  const std::string path = MakeBigDatabase(folder, "lathe.db");
  sqlite3* newer = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &newer), SQLITE_OK);
  const std::string sql =
      absl::StrCat("PRAGMA wal_autocheckpoint = 0; PRAGMA user_version = ",
                   Database::CurrentSchemaVersion() + 1);
  ASSERT_EQ(sqlite3_exec(newer, sql.c_str(), nullptr, nullptr, nullptr),
            SQLITE_OK);
  ASSERT_GT(testing::FileSize(path + "-wal"), 0);
  for (const OpenOptions& options : {ReadOnlyMode(), ReadWriteMode()}) {
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, options);
    ASSERT_FALSE(db.ok());
    EXPECT_EQ(db.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(absl::StrContains(db.status().message(), "is newer"))
        << db.status();
  }
  sqlite3_close(newer);
}

// Queries on a database with damaged pages: the ones that must reach the
// damage fail as DataLoss naming the file; none crashes or writes. (A commit
// is not tried: one that only touches sound pages may succeed, as Open does
// not read every page.)
void ExpectQueriesFailAsDataLoss(Database& d, const std::string& path) {
  // Reading every record must reach the damage and say so.
  absl::StatusOr<std::vector<proto::Record>> task =
      d.RecordsOfTask("w", DefaultTarget().canonical());
  ASSERT_FALSE(task.ok()) << "read " << task->size() << " records";
  EXPECT_EQ(task.status().code(), absl::StatusCode::kDataLoss) << task.status();
  EXPECT_TRUE(absl::StrContains(task.status().message(), path))
      << task.status();
  absl::StatusOr<std::map<int, int>> counts = BatchCounts(d);
  ASSERT_FALSE(counts.ok());
  EXPECT_EQ(counts.status().code(), absl::StatusCode::kDataLoss)
      << counts.status();

  // Other queries may or may not touch a damaged page; when they fail,
  // it is as DataLoss.
  auto expect_ok_or_data_loss = [](const absl::Status& status,
                                   const char* what) {
    EXPECT_TRUE(status.ok() || status.code() == absl::StatusCode::kDataLoss)
        << what << ": " << status;
  };
  expect_ok_or_data_loss(d.Best("w", DefaultTarget()).status(), "Best");
  expect_ok_or_data_loss(d.Top("w", DefaultTarget(), 10).status(), "Top");
  expect_ok_or_data_loss(d.GetStats().status(), "GetStats");
  expect_ok_or_data_loss(d.Tasks().status(), "Tasks");
  expect_ok_or_data_loss(
      d.IsMeasured("w", DefaultTarget().canonical(), "b3-1").status(),
      "IsMeasured");
  expect_ok_or_data_loss(
      d.MeasuredHashes("w", DefaultTarget().canonical()).status(),
      "MeasuredHashes");
  absl::StatusOr<CheckReport> check = d.Check();
  if (check.ok()) {
    EXPECT_FALSE(check->ok()) << "Check found nothing wrong";
  } else {
    EXPECT_EQ(check.status().code(), absl::StatusCode::kDataLoss)
        << check.status();
  }
}

TEST(Faults, ADatabaseCorruptInItsMiddlePagesFailsQueriesWithoutCrashing) {
  TempFolder folder;
  const std::string path = MakeBigDatabase(folder, "lathe.db");
  std::string bytes = ReadFile(path);
  ASSERT_GT(bytes.size(), 40u * 4096);
  // Page 1 (the header and the schema) stays; a third of the pages after it
  // become garbage.
  for (size_t i = bytes.size() / 3; i < 2 * bytes.size() / 3; ++i)
    bytes[i] = '\xa5';
  WriteFile(path, bytes);

  for (const OpenOptions& options : {ReadOnlyMode(), ReadWriteMode()}) {
    const bool writable = options.mode != OpenOptions::Mode::kReadOnly;
    {
      absl::StatusOr<std::unique_ptr<Database>> db =
          Database::Open(path, options);
      if (!db.ok()) {
        EXPECT_EQ(db.status().code(), absl::StatusCode::kDataLoss)
            << db.status();
        EXPECT_TRUE(absl::StrContains(db.status().message(), path))
            << db.status();
      }
      if (db.ok()) ExpectQueriesFailAsDataLoss(**db, path);
    }
    // The damage is as it was: Lathe wrote nothing.
    EXPECT_TRUE(ReadFile(path) == bytes)
        << (writable ? "read-write" : "read-only");
    if (writable) {
      EXPECT_FALSE(FileExists(path + "-wal"));
    }
  }
}

TEST(Faults, ADatabaseWithADamagedPageNoQueryReadsIsRefusedAtOpen) {
  // Bytes flipped in a page lookups never read (the cost models' table): a
  // query would not notice, so Open must, in every mode, and write nothing.
  TempFolder folder;
  const std::string path = MakeBigDatabase(folder, "lathe.db");
  int64_t page_size = 0;
  int64_t root = 0;
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(
        sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr),
        SQLITE_OK);
    sqlite3_stmt* query = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(
                  raw,
                  "SELECT (SELECT page_size FROM pragma_page_size), rootpage "
                  "FROM sqlite_master WHERE name = 'cost_models'",
                  -1, &query, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(query), SQLITE_ROW);
    page_size = sqlite3_column_int64(query, 0);
    root = sqlite3_column_int64(query, 1);
    sqlite3_finalize(query);
    sqlite3_close(raw);
  }
  ASSERT_GT(root, 1);
  std::remove((path + "-wal").c_str());
  std::remove((path + "-shm").c_str());
  std::string bytes = ReadFile(path);
  // The page's cell count (b-tree page header bytes 3 and 4).
  bytes[(root - 1) * page_size + 3] = '\xff';
  bytes[(root - 1) * page_size + 4] = '\xff';
  WriteFile(path, bytes);

  for (const OpenOptions& options :
       {ReadOnlyMode(), ReadWriteMode(), CreateMode()}) {
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, options);
    ASSERT_FALSE(db.ok()) << "opened a damaged database";
    EXPECT_EQ(db.status().code(), absl::StatusCode::kDataLoss) << db.status();
    EXPECT_TRUE(absl::StrContains(db.status().message(),
                                  absl::StrCat(path, ": damaged")))
        << db.status();
    EXPECT_TRUE(ReadFile(path) == bytes) << "a refused database was written";
    EXPECT_LE(testing::FileSize(path + "-wal"), 0) << "frames in the log";
  }
  // The full check still opens it, to say what is wrong.
  OpenOptions unchecked = ReadOnlyMode();
  unchecked.check_pages = false;
  absl::StatusOr<std::unique_ptr<Database>> db =
      Database::Open(path, unchecked);
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<CheckReport> check = (*db)->Check();
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_FALSE(check->ok());
}

// A read-only file

TEST(Faults, AReadOnlyFileOpensForLookupsOnly) {
  TempFolder folder;
  // The child may run as another user (below), who must be able to create
  // the database and its -wal and -shm here.
  ASSERT_EQ(chmod(folder.path().c_str(), 0777), 0);
  const std::string path = folder.File("lathe.db");
  const std::string result = WaitChild(StartChild([&]() -> std::string {
    // Root may write a 0444 file; an ordinary user may not.
    if (geteuid() == 0) {
      if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 ||
          setuid(65534) != 0) {
        return absl::StrCat("cannot drop root: ", std::strerror(errno));
      }
    }
    std::vector<std::string> problems;
    if (absl::Status created = CreateDatabase(path, Batch(0)); !created.ok()) {
      return created.ToString();
    }
    if (chmod(path.c_str(), 0444) != 0)
      return absl::StrCat("chmod: ", std::strerror(errno));
    const std::string before = ReadFile(path);
    for (const OpenOptions& options : {ReadWriteMode(), CreateMode()}) {
      absl::StatusOr<std::unique_ptr<Database>> db =
          Database::Open(path, options);
      if (db.ok()) {
        problems.push_back("a 0444 file opened for writing");
      } else if (db.status().code() != absl::StatusCode::kPermissionDenied ||
                 !absl::StrContains(db.status().message(), path)) {
        problems.push_back(absl::StrCat(
            "want PermissionDenied naming the file: ", db.status().ToString()));
      }
    }
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, ReadOnlyMode());
    if (!db.ok())
      return absl::StrCat("read-only open: ", db.status().ToString());
    absl::StatusOr<std::optional<Match>> best =
        (*db)->Best("w", DefaultTarget());
    if (!best.ok() || !best->has_value()) {
      problems.push_back(absl::StrCat("lookup: ", best.status().ToString()));
    }
    absl::StatusOr<std::map<int, int>> counts = BatchCounts(**db);
    if (!counts.ok() || IncompleteBatches(*counts) != "" ||
        counts->size() != 1) {
      problems.push_back(absl::StrCat("records: ", counts.status().ToString()));
    }
    absl::StatusOr<CommitResult> committed = (*db)->Commit(Batch(1));
    if (committed.ok() ||
        !absl::StrContains(committed.status().message(), path)) {
      problems.push_back(
          absl::StrCat("commit: ", committed.status().ToString()));
    }
    db->reset();
    if (ReadFile(path) != before) problems.push_back("the file changed");
    return absl::StrJoin(problems, "; ");
  }));
  EXPECT_EQ(result, "");
}

}  // namespace
}  // namespace lathe::db
