// Tests of database/sqlite_connection.h: status mapping, statements,
// transactions.
#include "database/sqlite_connection.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include <sqlite3.h>

#include "gtest/gtest.h"
#include "tests/database/test_records.h"

namespace lathe::db {
namespace {

using testing::TempFolder;

constexpr int kReadWriteCreate = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;

std::unique_ptr<Connection> OpenOrNull(const std::string& path,
                                       int flags = kReadWriteCreate) {
  absl::StatusOr<std::unique_ptr<Connection>> connection =
      Connection::Open(path, flags);
  EXPECT_TRUE(connection.ok()) << connection.status();
  return connection.ok() ? *std::move(connection) : nullptr;
}

TEST(StatusCodeOfSqlite, MapsCodesACallerCanActOn) {
  EXPECT_EQ(StatusCodeOfSqlite(SQLITE_OK), absl::StatusCode::kOk);
  EXPECT_EQ(StatusCodeOfSqlite(SQLITE_DONE), absl::StatusCode::kOk);
  EXPECT_EQ(StatusCodeOfSqlite(SQLITE_FULL),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(StatusCodeOfSqlite(SQLITE_READONLY),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(StatusCodeOfSqlite(SQLITE_CORRUPT), absl::StatusCode::kDataLoss);
  EXPECT_EQ(StatusCodeOfSqlite(SQLITE_NOTADB), absl::StatusCode::kDataLoss);
  EXPECT_EQ(StatusCodeOfSqlite(SQLITE_BUSY), absl::StatusCode::kUnavailable);
  EXPECT_EQ(StatusCodeOfSqlite(SQLITE_CONSTRAINT),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(StatusCodeOfSqlite(SQLITE_CANTOPEN), absl::StatusCode::kNotFound);
  EXPECT_EQ(StatusCodeOfSqlite(SQLITE_ERROR), absl::StatusCode::kInternal);
}

TEST(StatusCodeOfSqlite, UsesThePrimaryCodeOfExtendedCodes) {
  // Connections are opened with extended codes (SQLITE_OPEN_EXRESCODE).
  EXPECT_EQ(StatusCodeOfSqlite(SQLITE_READONLY_DBMOVED),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(StatusCodeOfSqlite(SQLITE_BUSY_SNAPSHOT),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(StatusCodeOfSqlite(SQLITE_CORRUPT_INDEX),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(StatusCodeOfSqlite(SQLITE_CONSTRAINT_UNIQUE),
            absl::StatusCode::kInvalidArgument);
}

TEST(SqliteError, NamesTheFile) {
  absl::Status error =
      SqliteError(SQLITE_FULL, "/some/lathe.db", "database or disk is full");
  EXPECT_EQ(error.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(error.message(), "/some/lathe.db: database or disk is full");
}

TEST(Connection, OpenInAMissingFolderFailsNamingThePath) {
  TempFolder folder;
  const std::string path = folder.File("no/such/folder/x.db");
  absl::StatusOr<std::unique_ptr<Connection>> connection =
      Connection::Open(path, kReadWriteCreate);
  ASSERT_FALSE(connection.ok());
  EXPECT_EQ(connection.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(connection.status().message().find(path), absl::string_view::npos)
      << connection.status();
}

TEST(Connection, ExecErrorNamesTheFileAndTheStatement) {
  TempFolder folder;
  std::unique_ptr<Connection> c = OpenOrNull(folder.File("x.db"));
  ASSERT_NE(c, nullptr);
  absl::Status error = c->Exec("CREATE TABLE t(x); SELEKT 1");
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.message().find(folder.File("x.db")), absl::string_view::npos)
      << error;
  EXPECT_NE(error.message().find("SELEKT"), absl::string_view::npos) << error;
}

TEST(Connection, ConstraintViolationIsInvalidArgument) {
  TempFolder folder;
  std::unique_ptr<Connection> c = OpenOrNull(folder.File("x.db"));
  ASSERT_NE(c, nullptr);
  LATHE_ASSERT_OK(c->Exec("CREATE TABLE t(x UNIQUE); INSERT INTO t VALUES(1)"));
  absl::StatusOr<Statement*> insert = c->Prepare("INSERT INTO t VALUES(?1)");
  LATHE_ASSERT_OK(insert.status());
  (*insert)->BindInt(1, 1);
  absl::Status error = (*insert)->Run();
  EXPECT_EQ(error.code(), absl::StatusCode::kInvalidArgument) << error;
  EXPECT_NE(error.message().find(folder.File("x.db")), absl::string_view::npos)
      << error;
}

TEST(Connection, PrepareCachesByTextAndResetsBindings) {
  TempFolder folder;
  std::unique_ptr<Connection> c = OpenOrNull(folder.File("x.db"));
  ASSERT_NE(c, nullptr);
  absl::StatusOr<Statement*> first = c->Prepare("SELECT ?1");
  LATHE_ASSERT_OK(first.status());
  (*first)->BindInt(1, 42);
  absl::StatusOr<bool> row = (*first)->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ((*first)->ColumnInt(0), 42);

  // The same text gives the same statement, rewound and with its binding
  // cleared, even though the first use was left mid-way.
  absl::StatusOr<Statement*> again = c->Prepare("SELECT ?1");
  LATHE_ASSERT_OK(again.status());
  EXPECT_EQ(*again, *first);
  row = (*again)->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_TRUE((*again)->ColumnIsNull(0));

  absl::StatusOr<Statement*> other = c->Prepare("SELECT ?1 + 1");
  LATHE_ASSERT_OK(other.status());
  EXPECT_NE(*other, *first);
}

TEST(Statement, ValuesRoundTrip) {
  TempFolder folder;
  std::unique_ptr<Connection> c = OpenOrNull(folder.File("x.db"));
  ASSERT_NE(c, nullptr);
  LATHE_ASSERT_OK(
      c->Exec("CREATE TABLE t(i INTEGER, d REAL, s TEXT, b BLOB, e BLOB, n)"));
  absl::StatusOr<Statement*> insert =
      c->Prepare("INSERT INTO t VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
  LATHE_ASSERT_OK(insert.status());
  const std::string blob("a\0b\xff", 4);
  (*insert)->BindInt(1, std::numeric_limits<int64_t>::min());
  (*insert)->BindDouble(2, 0.1 + 0.2);
  (*insert)->BindText(3, "tëxt");
  (*insert)->BindBlob(4, blob);
  (*insert)->BindBlob(5, "");
  (*insert)->BindNull(6);
  LATHE_ASSERT_OK((*insert)->Run());

  absl::StatusOr<Statement*> select =
      c->Prepare("SELECT i, d, s, b, e, n, typeof(e) FROM t");
  LATHE_ASSERT_OK(select.status());
  absl::StatusOr<bool> row = (*select)->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ((*select)->ColumnInt(0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ((*select)->ColumnDouble(1), 0.1 + 0.2);
  EXPECT_EQ((*select)->ColumnText(2), "tëxt");
  EXPECT_EQ((*select)->ColumnBlob(3), blob);
  // An empty blob is stored as a blob, not as NULL (the schema's NOT NULL
  // columns rely on it).
  EXPECT_FALSE((*select)->ColumnIsNull(4));
  EXPECT_EQ((*select)->ColumnText(6), "blob");
  EXPECT_EQ((*select)->ColumnBlob(4), "");
  EXPECT_TRUE((*select)->ColumnIsNull(5));
  row = (*select)->Step();
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(*row);
}

TEST(Connection, QueryIntReadsOneValueAndZeroForNoRow) {
  TempFolder folder;
  std::unique_ptr<Connection> c = OpenOrNull(folder.File("x.db"));
  ASSERT_NE(c, nullptr);
  LATHE_ASSERT_OK(c->Exec("CREATE TABLE t(x); INSERT INTO t VALUES(7), (8)"));
  absl::StatusOr<int64_t> count = c->QueryInt("SELECT COUNT(*) FROM t");
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 2);
  absl::StatusOr<int64_t> none = c->QueryInt("SELECT x FROM t WHERE x > 100");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(*none, 0);
  EXPECT_FALSE(c->QueryInt("SELECT x FROM missing").ok());
}

TEST(WriteTransaction, RollsBackUnlessCommitted) {
  TempFolder folder;
  std::unique_ptr<Connection> c = OpenOrNull(folder.File("x.db"));
  ASSERT_NE(c, nullptr);
  LATHE_ASSERT_OK(c->Exec("CREATE TABLE t(x)"));
  {
    absl::StatusOr<std::unique_ptr<WriteTransaction>> t =
        WriteTransaction::Begin(*c);
    LATHE_ASSERT_OK(t.status());
    LATHE_ASSERT_OK(c->Exec("INSERT INTO t VALUES(1)"));
  }
  EXPECT_EQ(*c->QueryInt("SELECT COUNT(*) FROM t"), 0);
  {
    absl::StatusOr<std::unique_ptr<WriteTransaction>> t =
        WriteTransaction::Begin(*c);
    LATHE_ASSERT_OK(t.status());
    LATHE_ASSERT_OK(c->Exec("INSERT INTO t VALUES(1)"));
    LATHE_ASSERT_OK((*t)->Commit());
  }
  EXPECT_EQ(*c->QueryInt("SELECT COUNT(*) FROM t"), 1);
  // Nothing is left open: a new transaction can begin.
  LATHE_EXPECT_OK(WriteTransaction::Begin(*c).status());
}

TEST(WriteTransaction, ABusyDatabaseFailsAtBeginAsUnavailable) {
  TempFolder folder;
  const std::string path = folder.File("x.db");
  std::unique_ptr<Connection> first = OpenOrNull(path);
  std::unique_ptr<Connection> second = OpenOrNull(path);
  ASSERT_TRUE(first && second);
  LATHE_ASSERT_OK(first->Exec("PRAGMA journal_mode = WAL; CREATE TABLE t(x)"));
  absl::StatusOr<std::unique_ptr<WriteTransaction>> held =
      WriteTransaction::Begin(*first);
  LATHE_ASSERT_OK(held.status());
  // No busy timeout on `second`: it fails at once instead of waiting.
  absl::StatusOr<std::unique_ptr<WriteTransaction>> busy =
      WriteTransaction::Begin(*second);
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.status().code(), absl::StatusCode::kUnavailable)
      << busy.status();
  EXPECT_NE(busy.status().message().find(path), absl::string_view::npos)
      << busy.status();
}

TEST(ReadTransaction, SeesOneSnapshotWhileAnotherConnectionCommits) {
  TempFolder folder;
  const std::string path = folder.File("x.db");
  std::unique_ptr<Connection> writer = OpenOrNull(path);
  std::unique_ptr<Connection> reader = OpenOrNull(path, SQLITE_OPEN_READONLY);
  ASSERT_TRUE(writer && reader);
  LATHE_ASSERT_OK(writer->Exec(
      "PRAGMA journal_mode = WAL; CREATE TABLE t(x); INSERT INTO t VALUES(1)"));
  {
    absl::StatusOr<std::unique_ptr<ReadTransaction>> snapshot =
        ReadTransaction::Begin(*reader);
    LATHE_ASSERT_OK(snapshot.status());
    EXPECT_EQ(*reader->QueryInt("SELECT COUNT(*) FROM t"), 1);
    LATHE_ASSERT_OK(writer->Exec("INSERT INTO t VALUES(2)"));
    EXPECT_EQ(*reader->QueryInt("SELECT COUNT(*) FROM t"), 1);
  }
  EXPECT_EQ(*reader->QueryInt("SELECT COUNT(*) FROM t"), 2);
}

}  // namespace
}  // namespace lathe::db
