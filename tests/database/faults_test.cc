// Tests of database/database.h under faults: damaged and foreign files,
// readers beside a writer in other processes, a writer killed mid-batch, a
// full disk, a read-only file. Uses fork(): each test starts its children
// while it has one thread and no open database (a SQLite connection must
// not cross a fork), and children leave with _exit.
#include <grp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "database/database.h"
#include "gtest/gtest.h"
#include "tests/database/test_records.h"

namespace lathe::db {
namespace {

using testing::CreateDatabase;
using testing::CreateMode;
using testing::DefaultTarget;
using testing::FileExists;
using testing::OkRecord;
using testing::ReadFile;
using testing::ReadOnlyMode;
using testing::ReadWriteMode;
using testing::TempFolder;
using testing::WriteFile;

constexpr int kBatchSize = 50;

// Record `i` of batch `batch`: the batch number rides in the runner.
// `padding` decision values make records bigger, so that fewer batches fill
// the log to a checkpoint or the disk to its limit.
proto::Record BatchRecord(int batch, int i, int padding = 0) {
  proto::Record record =
      OkRecord("w", DefaultTarget(), absl::StrCat("b", batch, "-", i),
               1e-3 * (1 + i % 7));
  record.set_runner(absl::StrCat("batch-", batch));
  proto::TraceDecision* decision = record.mutable_trace()->add_decisions();
  for (int k = 0; k < padding; ++k)
    decision->add_values(int64_t{7919} * k + batch);
  return record;
}

std::vector<proto::Record> Batch(int batch, int size = kBatchSize,
                                 int padding = 0) {
  std::vector<proto::Record> records;
  for (int i = 0; i < size; ++i)
    records.push_back(BatchRecord(batch, i, padding));
  return records;
}

// How many records of each batch one snapshot of the database holds.
absl::StatusOr<std::map<int, int>> BatchCounts(Database& db) {
  std::map<int, int> counts;
  absl::Status read =
      db.ForEachRecord([&](const proto::Record& record) -> absl::Status {
        int batch = 0;
        if (!absl::StartsWith(record.runner(), "batch-") ||
            !absl::SimpleAtoi(record.runner().substr(6), &batch)) {
          return absl::InternalError(absl::StrCat("record ", record.id(),
                                                  " of no batch: runner '",
                                                  record.runner(), "'"));
        }
        ++counts[batch];
        return absl::OkStatus();
      });
  if (!read.ok()) return read;
  return counts;
}

// "" when every batch in `counts` is complete and they are batches
// 0, 1, 2, ... (a writer commits them in that order); else what is wrong.
std::string IncompleteBatches(const std::map<int, int>& counts,
                              int batch_size = kBatchSize) {
  std::vector<std::string> problems;
  int expected = 0;
  for (const auto& [batch, count] : counts) {
    if (count != batch_size)
      problems.push_back(absl::StrCat("batch ", batch, " has ", count));
    if (batch != expected)
      problems.push_back(absl::StrCat("batch ", batch, " follows a gap"));
    expected = batch + 1;
  }
  return absl::StrJoin(problems, "; ");
}

std::string CheckProblems(Database& db) {
  absl::StatusOr<CheckReport> report = db.Check();
  if (!report.ok()) return std::string(report.status().message());
  return absl::StrJoin(report->problems, "; ");
}

bool ReadAll(int fd, void* data, size_t size) {
  char* out = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = read(fd, out, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool WriteAll(int fd, const void* data, size_t size) {
  const char* in = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = write(fd, in, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    in += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// A child started by StartChild: its pid and the pipe its message comes on.
struct Child {
  pid_t pid = -1;
  int message_fd = -1;
};

// Forks a child that runs `body`, which returns "" for success or what went
// wrong; the child sends that back and leaves with _exit, so nothing of the
// parent (gtest, static destructors, buffered files) runs twice. A child
// that hangs is killed by its alarm after `limit_s`.
Child StartChild(const std::function<std::string()>& body, int limit_s = 60) {
  int fds[2];
  Child child;
  if (pipe(fds) != 0) return child;
  fflush(nullptr);
  child.pid = fork();
  if (child.pid == 0) {
    close(fds[0]);
    alarm(static_cast<unsigned>(limit_s));
    const std::string message = body();
    WriteAll(fds[1], message.data(), message.size());
    _exit(message.empty() ? 0 : 1);
  }
  close(fds[1]);
  child.message_fd = fds[0];
  return child;
}

// "" when the child succeeded; otherwise its message and how it ended.
std::string WaitChild(const Child& child) {
  if (child.pid < 0) return "fork failed";
  std::string message;
  char buffer[4096];
  ssize_t n;
  while ((n = read(child.message_fd, buffer, sizeof buffer)) > 0) {
    message.append(buffer, static_cast<size_t>(n));
  }
  close(child.message_fd);
  int status = 0;
  waitpid(child.pid, &status, 0);
  if (WIFSIGNALED(status)) {
    return absl::StrCat(message, " [killed by signal ", WTERMSIG(status), "]");
  }
  if (WEXITSTATUS(status) != 0 && message.empty()) {
    return absl::StrCat("exited with status ", WEXITSTATUS(status));
  }
  return message;
}

// What a refused open must leave exactly as it was.
struct OnDisk {
  std::string bytes;
  bool wal = false;
  bool shm = false;
  bool operator==(const OnDisk& other) const {
    return bytes == other.bytes && wal == other.wal && shm == other.shm;
  }
};

OnDisk StateOf(const std::string& path) {
  return {ReadFile(path), FileExists(path + "-wal"), FileExists(path + "-shm")};
}

// Opens `path` in every mode and expects each to be refused naming the
// file, with `words` in the message, and the file untouched.
void ExpectRefusedAndUntouched(const std::string& path, absl::StatusCode code,
                               const std::string& words) {
  const OnDisk before = StateOf(path);
  ASSERT_FALSE(before.bytes.empty());
  const std::pair<const char*, OpenOptions> modes[] = {
      {"read-only", ReadOnlyMode()},
      {"read-write", ReadWriteMode()},
      {"create", CreateMode()}};
  for (const auto& [name, options] : modes) {
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, options);
    ASSERT_FALSE(db.ok()) << name;
    EXPECT_EQ(db.status().code(), code) << name << ": " << db.status();
    EXPECT_TRUE(absl::StrContains(db.status().message(), path))
        << name << ": " << db.status();
    EXPECT_TRUE(absl::StrContains(db.status().message(), words))
        << name << ": " << db.status();
    const OnDisk after = StateOf(path);
    EXPECT_TRUE(after.bytes == before.bytes)
        << name << ": the file's bytes changed";
    EXPECT_EQ(after.wal, before.wal) << name << ": -wal";
    EXPECT_EQ(after.shm, before.shm) << name << ": -shm";
  }
}

// A closed Lathe database of many pages.
std::string MakeBigDatabase(const TempFolder& folder, const std::string& name) {
  const std::string path = folder.File(name);
  std::vector<proto::Record> records;
  for (int b = 0; b < 12; ++b) {
    for (const proto::Record& record : Batch(b, kBatchSize, /*padding=*/20)) {
      records.push_back(record);
    }
  }
  EXPECT_TRUE(CreateDatabase(path, records).ok());
  EXPECT_FALSE(FileExists(path + "-wal"));
  return path;
}

void RawSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

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

// Readers and a writer in other processes

TEST(Faults, ReadersInOtherProcessesSeeOnlyWholeBatches) {
  constexpr int kBatches = 200;
  constexpr int kReaders = 3;
  TempFolder folder;
  const std::string path = folder.File("lathe.db");
  ASSERT_TRUE(CreateDatabase(path, {}).ok());

  // Reader 0 tells the writer each total it sees; the writer waits for it at
  // a few points, so readers are sure to look while batches are arriving.
  int progress[2];
  ASSERT_EQ(pipe(progress), 0);
  auto reader = [&](int index) -> std::string {
    if (index != 0) close(progress[1]);
    close(progress[0]);
    // A write to the writer's pipe after it is gone fails rather than kills.
    signal(SIGPIPE, SIG_IGN);
    bool reporting = index == 0;
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, ReadOnlyMode());
    if (!db.ok())
      return absl::StrCat("reader ", index, ": ", db.status().ToString());
    int64_t last = -1;
    int looks = 0;
    while (true) {
      ++looks;
      std::map<int, int> counts;
      int64_t total = 0;
      if (index == 1) {
        // Stats and then every record: two snapshots, each whole.
        absl::StatusOr<Stats> stats = (*db)->GetStats();
        if (!stats.ok())
          return absl::StrCat("reader 1: ", stats.status().ToString());
        if (stats->records % kBatchSize != 0) {
          return absl::StrCat("reader 1: stats count ", stats->records,
                              " records");
        }
        absl::StatusOr<std::map<int, int>> all = BatchCounts(**db);
        if (!all.ok())
          return absl::StrCat("reader 1: ", all.status().ToString());
        counts = *all;
      } else {
        absl::StatusOr<std::vector<proto::Record>> task =
            (*db)->RecordsOfTask("w", DefaultTarget().canonical());
        if (!task.ok())
          return absl::StrCat("reader ", index, ": ", task.status().ToString());
        for (const proto::Record& record : *task) {
          int batch = -1;
          absl::SimpleAtoi(record.runner().substr(6), &batch);
          ++counts[batch];
        }
      }
      for (const auto& [batch, count] : counts) total += count;
      if (std::string problems = IncompleteBatches(counts); !problems.empty()) {
        return absl::StrCat("reader ", index, " at look ", looks, ": ",
                            problems);
      }
      if (total < last)
        return absl::StrCat("reader ", index, ": total went back to ", total);
      // Once the writer has passed its last wait it stops listening.
      if (index == 0 && total != last && reporting) {
        reporting = WriteAll(progress[1], &total, sizeof total);
      }
      last = total;
      if (total == int64_t{kBatches} * kBatchSize) return "";
    }
  };
  std::vector<Child> readers;
  for (int i = 0; i < kReaders; ++i)
    readers.push_back(StartChild([&, i] { return reader(i); }));
  close(progress[1]);
  Child writer = StartChild([&]() -> std::string {
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, ReadWriteMode());
    if (!db.ok()) return absl::StrCat("writer: ", db.status().ToString());
    for (int b = 0; b < kBatches; ++b) {
      absl::StatusOr<CommitResult> committed = (*db)->Commit(Batch(b));
      if (!committed.ok())
        return absl::StrCat("writer: batch ", b, ": ",
                            committed.status().ToString());
      if (committed->added != kBatchSize)
        return absl::StrCat("writer: batch ", b, " added ", committed->added);
      const int64_t done = int64_t{b + 1} * kBatchSize;
      if ((b + 1) % 50 == 0 && b + 1 < kBatches) {
        int64_t seen = 0;
        while (seen < done) {
          if (!ReadAll(progress[0], &seen, sizeof seen))
            return "writer: reader 0 went away";
        }
      }
    }
    return "";
  });
  close(progress[0]);

  EXPECT_EQ(WaitChild(writer), "") << "writer";
  for (int i = 0; i < kReaders; ++i)
    EXPECT_EQ(WaitChild(readers[i]), "") << "reader " << i;

  absl::StatusOr<std::unique_ptr<Database>> db =
      Database::Open(path, ReadOnlyMode());
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<std::map<int, int>> counts = BatchCounts(**db);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(counts->size(), static_cast<size_t>(kBatches));
  EXPECT_EQ(IncompleteBatches(*counts), "");
}

// A writer killed mid-batch

TEST(Faults, AWriterKilledMidBatchLosesNoCommittedBatchAndLeavesNoPartOfOne) {
  std::mt19937 rng(20240611);
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    TempFolder folder;
    const std::string path = folder.File("lathe.db");
    ASSERT_TRUE(CreateDatabase(path, {}).ok());
    // How many reports to wait for, then a little more time, before the kill.
    const int reports_before_kill =
        std::uniform_int_distribution<int>(1, 80)(rng);
    const int extra_us = std::uniform_int_distribution<int>(0, 3000)(rng);

    int reports[2];
    ASSERT_EQ(pipe(reports), 0);
    Child writer = StartChild([&]() -> std::string {
      close(reports[0]);
      // Not durable: a process kill must lose nothing even without fsync.
      absl::StatusOr<std::unique_ptr<Database>> db =
          Database::Open(path, ReadWriteMode());
      if (!db.ok()) return db.status().ToString();
      for (int32_t b = 0;; ++b) {
        // Big records fill the log to a checkpoint every few dozen batches,
        // so some kills land in one.
        absl::StatusOr<CommitResult> committed =
            (*db)->Commit(Batch(b, kBatchSize, 100));
        if (!committed.ok())
          return absl::StrCat("batch ", b, ": ", committed.status().ToString());
        if (!WriteAll(reports[1], &b, sizeof b)) return "cannot report";
      }
    });
    close(reports[1]);
    std::vector<int32_t> reported;
    int32_t b = 0;
    while (static_cast<int>(reported.size()) < reports_before_kill &&
           ReadAll(reports[0], &b, sizeof b)) {
      reported.push_back(b);
    }
    // A random moment in the middle of some later batch (the randomness
    // picks where; correctness does not depend on the timing).
    usleep(static_cast<useconds_t>(extra_us));
    kill(writer.pid, SIGKILL);
    const std::string ended = WaitChild(writer);
    EXPECT_TRUE(absl::StrContains(ended, "killed by signal 9")) << ended;
    // Whatever the writer reported before it died is still in the pipe.
    while (ReadAll(reports[0], &b, sizeof b)) reported.push_back(b);
    close(reports[0]);
    ASSERT_GE(static_cast<int>(reported.size()), reports_before_kill);

    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, ReadWriteMode());
    ASSERT_TRUE(db.ok()) << db.status();
    absl::StatusOr<std::map<int, int>> counts = BatchCounts(**db);
    ASSERT_TRUE(counts.ok()) << counts.status();
    EXPECT_EQ(IncompleteBatches(*counts), "");
    for (int32_t batch : reported)
      EXPECT_EQ((*counts)[batch], kBatchSize) << "batch " << batch;
    // At most the batch whose report the kill cut off is there unreported.
    EXPECT_LE(counts->size(), reported.size() + 1);
    EXPECT_EQ(CheckProblems(**db), "");
    // The database takes new batches after the crash.
    absl::StatusOr<CommitResult> committed = (*db)->Commit(Batch(100000));
    ASSERT_TRUE(committed.ok()) << committed.status();
    EXPECT_EQ(committed->added, kBatchSize);
  }
}

// A full disk

TEST(Faults, ASizeLimitRefusesTheBatchThatWouldPassItAndKeepsTheRest) {
  TempFolder folder;
  const std::string path = folder.File("lathe.db");
  ASSERT_TRUE(CreateDatabase(path, Batch(0)).ok());
  const int64_t size = testing::FileSize(path);
  ASSERT_GT(size, 0);
  {
    OpenOptions limited = ReadWriteMode();
    limited.max_size_bytes = size + 256 * 1024;
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, limited);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)->Commit(Batch(1)).ok());
    // About 2 MB of records against the 256 kB left.
    absl::StatusOr<CommitResult> too_big =
        (*db)->Commit(Batch(2, 40 * kBatchSize, 20));
    ASSERT_FALSE(too_big.ok());
    EXPECT_EQ(too_big.status().code(), absl::StatusCode::kResourceExhausted)
        << too_big.status();
    EXPECT_TRUE(absl::StrContains(too_big.status().message(), path))
        << too_big.status();
    // Says what happened and what the limit is, without blaming a record.
    EXPECT_TRUE(absl::StrContains(
        too_big.status().message(),
        absl::StrCat("size limit is ", limited.max_size_bytes, " bytes")))
        << too_big.status();
    EXPECT_TRUE(
        absl::StrContains(too_big.status().message(), "batch not committed"))
        << too_big.status();
    EXPECT_TRUE(absl::StrContains(too_big.status().message(), "full"))
        << too_big.status();
    EXPECT_FALSE(absl::StrContains(too_big.status().message(), "record "))
        << too_big.status();

    // Nothing of the refused batch; all of the earlier ones.
    absl::StatusOr<std::map<int, int>> counts = BatchCounts(**db);
    ASSERT_TRUE(counts.ok()) << counts.status();
    EXPECT_EQ(counts->size(), 2u);
    EXPECT_EQ(IncompleteBatches(*counts), "");
    // The same object takes a batch that fits.
    absl::StatusOr<CommitResult> fits = (*db)->Commit(Batch(3));
    ASSERT_TRUE(fits.ok()) << fits.status();
    EXPECT_EQ(fits->added, kBatchSize);
    EXPECT_EQ(CheckProblems(**db), "");
  }
  EXPECT_LE(testing::FileSize(path), size + 256 * 1024);
  // Without the limit the big batch goes in.
  absl::StatusOr<std::unique_ptr<Database>> db =
      Database::Open(path, ReadWriteMode());
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<CommitResult> big =
      (*db)->Commit(Batch(2, 40 * kBatchSize, 20));
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(big->added, 40 * kBatchSize);
}

TEST(Faults, TheOperatingSystemsFileSizeLimitFailsACommitCleanly) {
  TempFolder folder;
  const std::string path = folder.File("lathe.db");
  ASSERT_TRUE(CreateDatabase(path, Batch(0)).ok());
  const rlim_t limit =
      static_cast<rlim_t>(testing::FileSize(path)) + 512 * 1024;

  int reports[2];
  ASSERT_EQ(pipe(reports), 0);
  Child writer = StartChild([&]() -> std::string {
    close(reports[0]);
    // Past the limit write() fails with EFBIG instead of killing us.
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {limit, limit};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
      return absl::StrCat("setrlimit: ", std::strerror(errno));
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, ReadWriteMode());
    if (!db.ok()) return absl::StrCat("open: ", db.status().ToString());
    for (int32_t b = 1; b < 100000; ++b) {
      absl::StatusOr<CommitResult> committed =
          (*db)->Commit(Batch(b, kBatchSize, 50));
      if (!committed.ok()) {
        // Reported as the last word: the failure and its message.
        const int32_t failed = -1;
        WriteAll(reports[1], &failed, sizeof failed);
        const std::string message(committed.status().ToString());
        if (!absl::StrContains(message, path))
          return absl::StrCat("unnamed file: ", message);
        return "";
      }
      WriteAll(reports[1], &b, sizeof b);
    }
    return "the limit was never reached";
  });
  close(reports[1]);
  std::vector<int32_t> committed;
  bool failed = false;
  int32_t b = 0;
  while (ReadAll(reports[0], &b, sizeof b)) {
    if (b < 0) {
      failed = true;
    } else {
      committed.push_back(b);
    }
  }
  close(reports[0]);
  EXPECT_EQ(WaitChild(writer), "");
  EXPECT_TRUE(failed) << "no commit failed";
  EXPECT_GT(committed.size(), 0u);

  absl::StatusOr<std::unique_ptr<Database>> db =
      Database::Open(path, ReadWriteMode());
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<std::map<int, int>> counts = BatchCounts(**db);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(IncompleteBatches(*counts), "");
  EXPECT_EQ(counts->size(), committed.size() + 1);  // and batch 0
  for (int32_t batch : committed)
    EXPECT_EQ((*counts)[batch], kBatchSize) << batch;
  EXPECT_EQ(CheckProblems(**db), "");
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
