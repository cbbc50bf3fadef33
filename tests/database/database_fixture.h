// The fixture of the Database tests (database_test.cc,
// database_lookup_test.cc, database_maintenance_test.cc): a database
// created in a temporary folder, with helpers to commit, read a task and
// check; and raw SQL behind Lathe's back for tampering tests.
// Tests: tests/database/database_test.cc.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "database/database.h"
#include "gtest/gtest.h"
#include "tests/database/test_records.h"

namespace lathe::db::testing {

inline bool Contains(const absl::Status& status, absl::string_view text) {
  return status.message().find(text) != absl::string_view::npos;
}

// Runs SQL on the file behind Lathe's back (tampering, as a bad tool would).
inline void RawSql(const std::string& path, const std::string& sql) {
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
}  // namespace lathe::db::testing
