#include "database/sqlite_connection.h"

#include <sqlite3.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace lathe::db {

absl::StatusCode StatusCodeOfSqlite(int rc) {
  switch (rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
      return absl::StatusCode::kOk;
    case SQLITE_FULL:
    case SQLITE_NOMEM:
    case SQLITE_TOOBIG:
      return absl::StatusCode::kResourceExhausted;
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return absl::StatusCode::kPermissionDenied;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::StatusCode::kDataLoss;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::StatusCode::kUnavailable;
    case SQLITE_CANTOPEN:
      return absl::StatusCode::kNotFound;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
      return absl::StatusCode::kInvalidArgument;
    case SQLITE_INTERRUPT:
    case SQLITE_ABORT:
      return absl::StatusCode::kAborted;
    default:
      return absl::StatusCode::kInternal;
  }
}

absl::Status SqliteError(int rc, const std::string& path,
                         absl::string_view message) {
  return absl::Status(StatusCodeOfSqlite(rc),
                      absl::StrCat(path, ": ", message));
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::BindInt(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
}
void Statement::BindDouble(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
}
void Statement::BindText(int index, absl::string_view value) {
  sqlite3_bind_text64(stmt_, index, value.data(), value.size(),
                      SQLITE_TRANSIENT, SQLITE_UTF8);
}
void Statement::BindBlob(int index, absl::string_view value) {
  // A zero-length blob must not bind as NULL.
  static const char kEmpty = 0;
  sqlite3_bind_blob64(stmt_, index, value.empty() ? &kEmpty : value.data(),
                      value.size(), SQLITE_TRANSIENT);
}
void Statement::BindNull(int index) { sqlite3_bind_null(stmt_, index); }

absl::StatusOr<bool> Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3* db = sqlite3_db_handle(stmt_);
  return SqliteError(
      rc, *path_,
      absl::StrCat(sqlite3_errmsg(db), " (in: ", sqlite3_sql(stmt_), ")"));
}

absl::Status Statement::Run() {
  absl::StatusOr<bool> row = Step();
  while (row.ok() && *row) row = Step();
  return row.status();
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::ColumnInt(int index) const {
  return sqlite3_column_int64(stmt_, index);
}
double Statement::ColumnDouble(int index) const {
  return sqlite3_column_double(stmt_, index);
}
bool Statement::ColumnIsNull(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}
std::string Statement::ColumnText(int index) const {
  const unsigned char* text = sqlite3_column_text(stmt_, index);
  return text ? std::string(
                    reinterpret_cast<const char*>(text),
                    static_cast<size_t>(sqlite3_column_bytes(stmt_, index)))
              : std::string();
}
std::string Statement::ColumnBlob(int index) const {
  const void* blob = sqlite3_column_blob(stmt_, index);
  return blob ? std::string(
                    static_cast<const char*>(blob),
                    static_cast<size_t>(sqlite3_column_bytes(stmt_, index)))
              : std::string();
}

absl::StatusOr<std::unique_ptr<Connection>> Connection::Open(
    const std::string& path, int flags) {
  return OpenAs(path, path, flags);
}

absl::StatusOr<std::unique_ptr<Connection>> Connection::OpenAs(
    const std::string& path, const std::string& filename, int flags) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(filename.c_str(), &db, flags | SQLITE_OPEN_EXRESCODE,
                           nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return SqliteError(rc, path, absl::StrCat("cannot open: ", message));
  }
  return std::unique_ptr<Connection>(new Connection(path, db));
}

absl::StatusOr<std::unique_ptr<Connection>> Connection::OpenImmutable(
    const std::string& path) {
  // A URI: the path's characters that URIs reserve are percent-encoded.
  std::string uri = "file:";
  for (unsigned char ch : path) {
    if (ch == '%' || ch == '?' || ch == '#' || ch < 0x20) {
      absl::StrAppendFormat(&uri, "%%%02X", ch);
    } else {
      uri.push_back(static_cast<char>(ch));
    }
  }
  uri += "?immutable=1";
  return OpenAs(path, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
}

Connection::~Connection() {
  statements_.clear();  // statements must be finalized before the close
  sqlite3_close_v2(db_);
}

absl::Status Connection::Error(int rc, absl::string_view doing) const {
  return SqliteError(rc, path_,
                     absl::StrCat(sqlite3_errmsg(db_), " (while ", doing, ")"));
}

absl::Status Connection::Exec(const std::string& sql) {
  char* message = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return absl::OkStatus();
  std::string text = message ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  return SqliteError(rc, path_,
                     absl::StrCat(text, " (in: ", sql.substr(0, 80), ")"));
}

absl::StatusOr<Statement*> Connection::Prepare(const std::string& sql) {
  auto it = statements_.find(sql);
  if (it != statements_.end()) {
    it->second->Reset();
    return it->second.get();
  }
  sqlite3_stmt* stmt = nullptr;
  int rc =
      sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size() + 1),
                         SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK)
    return Error(rc, absl::StrCat("preparing: ", sql.substr(0, 80)));
  auto statement = std::make_unique<Statement>(stmt, &path_);
  Statement* raw = statement.get();
  statements_.emplace(sql, std::move(statement));
  return raw;
}

absl::StatusOr<int64_t> Connection::QueryInt(const std::string& sql) {
  absl::StatusOr<Statement*> statement = Prepare(sql);
  if (!statement.ok()) return statement.status();
  absl::StatusOr<bool> row = (*statement)->Step();
  if (!row.ok()) return row.status();
  int64_t value = *row ? (*statement)->ColumnInt(0) : 0;
  (*statement)->Reset();
  return value;
}

absl::StatusOr<std::unique_ptr<WriteTransaction>> WriteTransaction::Begin(
    Connection& connection) {
  absl::Status begun = connection.Exec("BEGIN IMMEDIATE");
  if (!begun.ok()) return begun;
  return std::unique_ptr<WriteTransaction>(new WriteTransaction(connection));
}

WriteTransaction::~WriteTransaction() {
  if (!done_) connection_.Exec("ROLLBACK").IgnoreError();
}

absl::Status WriteTransaction::Commit() {
  absl::Status committed = connection_.Exec("COMMIT");
  // A failed COMMIT (a full disk) leaves the transaction open; the
  // destructor rolls it back.
  if (committed.ok()) done_ = true;
  return committed;
}

absl::StatusOr<std::unique_ptr<ReadTransaction>> ReadTransaction::Begin(
    Connection& connection) {
  // BEGIN inside a transaction is an error, and a COMMIT here would end
  // the enclosing one early.
  if (!sqlite3_get_autocommit(connection.raw())) {
    return std::unique_ptr<ReadTransaction>(
        new ReadTransaction(connection, /*owned=*/false));
  }
  // Cached statements, not Exec: every lookup begins and ends one of these,
  // and sqlite3_exec parses its SQL every time.
  absl::StatusOr<Statement*> begin = connection.Prepare("BEGIN DEFERRED");
  if (!begin.ok()) return begin.status();
  absl::Status begun = (*begin)->Run();
  if (!begun.ok()) return begun;
  return std::unique_ptr<ReadTransaction>(
      new ReadTransaction(connection, /*owned=*/true));
}

ReadTransaction::~ReadTransaction() {
  if (!owned_) return;
  absl::StatusOr<Statement*> commit = connection_.Prepare("COMMIT");
  if (commit.ok()) (*commit)->Run().IgnoreError();
}

}  // namespace lathe::db
