// Helpers of the fault tests of the database (faults_test.cc,
// faults_processes_test.cc, faults_disk_test.cc): numbered batches of
// records and their counts in a snapshot, children started with fork() that
// report back through a pipe, files that must be left untouched, raw SQL.
// Each test starts its children while it has one thread and no open
// database (a SQLite connection must not cross a fork), and children leave
// with _exit.
// Tests: tests/database/faults_test.cc.
#pragma once

#include <grp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
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

namespace lathe::db::testing {

inline constexpr int kBatchSize = 50;

// Record `i` of batch `batch`: the batch number rides in the runner.
// `padding` decision values make records bigger, so that fewer batches fill
// the log to a checkpoint or the disk to its limit.
inline proto::Record BatchRecord(int batch, int i, int padding = 0) {
  proto::Record record =
      OkRecord("w", DefaultTarget(), absl::StrCat("b", batch, "-", i),
               1e-3 * (1 + i % 7));
  record.set_runner(absl::StrCat("batch-", batch));
  // Padding that makes a record longer (and a database of many of them
  // span many pages) without touching what the records check.
  std::string pad;
  for (int k = 0; k < padding; ++k)
    absl::StrAppend(&pad, int64_t{7919} * k + batch, ".");
  record.set_lathe_version(pad);
  return record;
}

inline std::vector<proto::Record> Batch(int batch, int size = kBatchSize,
                                        int padding = 0) {
  std::vector<proto::Record> records;
  for (int i = 0; i < size; ++i)
    records.push_back(BatchRecord(batch, i, padding));
  return records;
}

// How many records of each batch one snapshot of the database holds.
inline absl::StatusOr<std::map<int, int>> BatchCounts(Database& db) {
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
inline std::string IncompleteBatches(const std::map<int, int>& counts,
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

inline std::string CheckProblems(Database& db) {
  absl::StatusOr<CheckReport> report = db.Check();
  if (!report.ok()) return std::string(report.status().message());
  return absl::StrJoin(report->problems, "; ");
}

inline bool ReadAll(int fd, void* data, size_t size) {
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

inline bool WriteAll(int fd, const void* data, size_t size) {
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
inline Child StartChild(const std::function<std::string()>& body,
                        int limit_s = 60) {
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
inline std::string WaitChild(const Child& child) {
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

inline OnDisk StateOf(const std::string& path) {
  return {ReadFile(path), FileExists(path + "-wal"), FileExists(path + "-shm")};
}

// Opens `path` in every mode and expects each to be refused naming the
// file, with `words` in the message, and the file untouched.
inline void ExpectRefusedAndUntouched(const std::string& path,
                                      absl::StatusCode code,
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
inline std::string MakeBigDatabase(const TempFolder& folder,
                                   const std::string& name) {
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

inline void RawSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}
}  // namespace lathe::db::testing
