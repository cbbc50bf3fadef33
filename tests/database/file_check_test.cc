// Tests of database/file_check.h: what is at a database path, judged before
// SQLite opens it.
#include "database/file_check.h"

#include <string>
#include <vector>

#include <sqlite3.h>

#include "database/schema.h"
#include "gtest/gtest.h"
#include "tests/database/test_records.h"

namespace lathe::db {
namespace {

using testing::CreateDatabase;
using testing::DefaultTarget;
using testing::FileSize;
using testing::OkRecord;
using testing::ReadFile;
using testing::TempFolder;
using testing::WriteFile;

bool Names(const absl::Status& status, const std::string& path) {
  return status.message().find(path) != absl::string_view::npos;
}

// A closed Lathe database of several pages.
std::string MakeDatabase(const TempFolder& folder) {
  const std::string path = folder.File("lathe.db");
  std::vector<proto::Record> records;
  for (int i = 0; i < 200; ++i) {
    records.push_back(
        OkRecord("w", DefaultTarget(), absl::StrCat("h", i), 1e-3 * (i + 1)));
  }
  EXPECT_TRUE(CreateDatabase(path, records).ok());
  return path;
}

// Runs SQL on a plain SQLite file (not through Lathe).
void RawSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

TEST(InspectDatabaseFile, AbsentFile) {
  TempFolder folder;
  absl::StatusOr<FileState> state = InspectDatabaseFile(folder.File("none.db"));
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(*state, FileState::kAbsent);
}

TEST(InspectDatabaseFile, EmptyFile) {
  TempFolder folder;
  WriteFile(folder.File("empty.db"), "");
  absl::StatusOr<FileState> state =
      InspectDatabaseFile(folder.File("empty.db"));
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(*state, FileState::kEmpty);
}

TEST(InspectDatabaseFile, RefusesATextFileNamingIt) {
  TempFolder folder;
  const std::string path = folder.File("notes.db");
  WriteFile(path, std::string(4096, 'x') + "\nhello, this is not a database\n");
  absl::StatusOr<FileState> state = InspectDatabaseFile(path);
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(Names(state.status(), path)) << state.status();
}

TEST(InspectDatabaseFile, RefusesAFileShorterThanTheHeader) {
  TempFolder folder;
  const std::string path = folder.File("short.db");
  WriteFile(path, std::string("SQLite format 3\0", 16) + std::string(20, '\0'));
  absl::StatusOr<FileState> state = InspectDatabaseFile(path);
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(Names(state.status(), path)) << state.status();
}

TEST(InspectDatabaseFile, RefusesAFolder) {
  TempFolder folder;
  absl::StatusOr<FileState> state = InspectDatabaseFile(folder.path());
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Names(state.status(), folder.path())) << state.status();
}

TEST(InspectDatabaseFile, AcceptsALatheDatabaseAndReadsItsHeader) {
  TempFolder folder;
  const std::string path = MakeDatabase(folder);
  DatabaseFileHeader header;
  absl::StatusOr<FileState> state = InspectDatabaseFile(path, &header);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(*state, FileState::kSqlite);
  EXPECT_TRUE(header.authoritative);
  EXPECT_EQ(header.application_id, static_cast<uint32_t>(kApplicationId));
  EXPECT_EQ(header.user_version, static_cast<uint32_t>(LatestSchemaVersion()));
  EXPECT_TRUE(header.has_schema);
}

TEST(InspectDatabaseFile, ReadsTheHeaderOfAPlainSqliteFile) {
  TempFolder folder;
  const std::string path = folder.File("plain.db");
  // Page 1 exists (the VACUUM writes it) but holds no table.
  RawSql(path, "PRAGMA user_version = 3; VACUUM");
  DatabaseFileHeader header;
  absl::StatusOr<FileState> state = InspectDatabaseFile(path, &header);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(*state, FileState::kSqlite);
  EXPECT_EQ(header.application_id, 0u);
  EXPECT_EQ(header.user_version, 3u);
  EXPECT_FALSE(header.has_schema);

  RawSql(path, "CREATE TABLE mine(x)");
  state = InspectDatabaseFile(path, &header);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_TRUE(header.has_schema);
}

TEST(InspectDatabaseFile, RefusesATruncatedDatabaseNamingIt) {
  TempFolder folder;
  const std::string path = MakeDatabase(folder);
  const std::string bytes = ReadFile(path);
  ASSERT_GT(bytes.size(), 8192u);
  WriteFile(path, bytes.substr(0, bytes.size() / 2));
  absl::StatusOr<FileState> state = InspectDatabaseFile(path);
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(Names(state.status(), path)) << state.status();
  EXPECT_NE(state.status().message().find("truncated"), absl::string_view::npos)
      << state.status();
}

TEST(InspectDatabaseFile, AShortFileWithFramesInItsLogIsNotCalledTruncated) {
  // A checkpoint cut short by a kill leaves the missing pages in the log.
  TempFolder folder;
  const std::string path = MakeDatabase(folder);
  const std::string bytes = ReadFile(path);
  WriteFile(path, bytes.substr(0, bytes.size() / 2));
  WriteFile(path + "-wal", std::string(64, '\1'));
  DatabaseFileHeader header;
  absl::StatusOr<FileState> state = InspectDatabaseFile(path, &header);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(*state, FileState::kSqlite);
  // The first page in the file may be older than the one in the log.
  EXPECT_FALSE(header.authoritative);

  // An empty log is no excuse.
  WriteFile(path + "-wal", "");
  EXPECT_EQ(InspectDatabaseFile(path).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(InspectDatabaseFile, RefusesADamagedMagicString) {
  TempFolder folder;
  const std::string path = MakeDatabase(folder);
  std::string bytes = ReadFile(path);
  bytes[3] = 'X';
  WriteFile(path, bytes);
  absl::StatusOr<FileState> state = InspectDatabaseFile(path);
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(Names(state.status(), path)) << state.status();
  EXPECT_GT(FileSize(path), 0);
}

}  // namespace
}  // namespace lathe::db
