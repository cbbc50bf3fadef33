// A SQLite connection and its prepared statements, with errors as
// absl::Status naming the file (SQLite's C API, nothing more).
//
// Error codes map to Status codes a caller can act on: a full disk or size
// limit is ResourceExhausted, a read-only file PermissionDenied, a corrupt or
// non-database file DataLoss, a lock held too long Unavailable.
// Tests: tests/database/sqlite_connection_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct sqlite3;
struct sqlite3_stmt;

namespace lathe::db {

class Statement {
 public:
  explicit Statement(sqlite3_stmt* stmt, const std::string* path)
      : stmt_(stmt), path_(path) {}
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are numbered from 1, as in SQLite.
  void BindInt(int index, int64_t value);
  void BindDouble(int index, double value);
  void BindText(int index, absl::string_view value);
  void BindBlob(int index, absl::string_view value);
  void BindNull(int index);

  // True when a row is ready, false when done.
  absl::StatusOr<bool> Step();
  // Steps to completion, for statements that return no rows.
  absl::Status Run();
  // Clears bindings and rewinds; called before every use of a cached statement.
  void Reset();

  // Columns are numbered from 0.
  int64_t ColumnInt(int index) const;
  double ColumnDouble(int index) const;
  bool ColumnIsNull(int index) const;
  std::string ColumnText(int index) const;
  std::string ColumnBlob(int index) const;

 private:
  sqlite3_stmt* stmt_;
  const std::string* path_;
};

class Connection {
 public:
  // `flags` are sqlite3_open_v2's. The file is not read until first use.
  static absl::StatusOr<std::unique_ptr<Connection>> Open(
      const std::string& path, int flags);
  // Read-only, as a file nothing writes while it is open (SQLite's
  // `immutable`): no -wal or -shm is created or read. For a database in a
  // folder this process cannot write, whose -shm SQLite could not create.
  static absl::StatusOr<std::unique_ptr<Connection>> OpenImmutable(
      const std::string& path);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  const std::string& path() const { return path_; }
  sqlite3* raw() { return db_; }

  // Runs one or more statements that return no rows.
  absl::Status Exec(const std::string& sql);
  // A prepared statement, cached by its text and reset for reuse.
  absl::StatusOr<Statement*> Prepare(const std::string& sql);
  // The single integer a query returns (a PRAGMA, a COUNT).
  absl::StatusOr<int64_t> QueryInt(const std::string& sql);

  // The Status for SQLite result code `rc` (or the connection's last error),
  // "PATH: MESSAGE (while DOING)".
  absl::Status Error(int rc, absl::string_view doing) const;

 private:
  Connection(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  // Opens `filename` (the path, or a URI of it) under `flags`; errors name
  // `path`.
  static absl::StatusOr<std::unique_ptr<Connection>> OpenAs(
      const std::string& path, const std::string& filename, int flags);
  std::string path_;
  sqlite3* db_;
  std::map<std::string, std::unique_ptr<Statement>> statements_;
};

// The Status code for a SQLite result code (primary code only).
absl::StatusCode StatusCodeOfSqlite(int rc);
absl::Status SqliteError(int rc, const std::string& path,
                         absl::string_view message);

// Begins a transaction on construction (BEGIN IMMEDIATE: takes the write
// lock now, so a busy database fails here rather than mid-batch) and rolls it
// back on destruction unless Commit() succeeded.
class WriteTransaction {
 public:
  static absl::StatusOr<std::unique_ptr<WriteTransaction>> Begin(
      Connection& connection);
  ~WriteTransaction();
  absl::Status Commit();

 private:
  explicit WriteTransaction(Connection& connection) : connection_(connection) {}
  Connection& connection_;
  bool done_ = false;
};

// A read transaction, so that a multi-query read sees one snapshot. Inside
// a transaction already open on the connection (a query run by a
// ForEachRecord visitor or a commit's record source) it joins that one.
class ReadTransaction {
 public:
  static absl::StatusOr<std::unique_ptr<ReadTransaction>> Begin(
      Connection& connection);
  ~ReadTransaction();

 private:
  ReadTransaction(Connection& connection, bool owned)
      : connection_(connection), owned_(owned) {}
  Connection& connection_;
  bool owned_;  // begun here, so ended here
};

}  // namespace lathe::db
