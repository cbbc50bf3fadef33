// Tests of database/schema.h: the schema version and the forward migrations,
// alone and through Database::Open.
#include "database/schema.h"

#include <memory>
#include <string>

#include <sqlite3.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "database/database.h"
#include "database/record_codec.h"
#include "gtest/gtest.h"
#include "tests/database/test_records.h"

namespace lathe::db {
namespace {

using testing::Bytes;
using testing::DefaultTarget;
using testing::FileExists;
using testing::MakeRecord;
using testing::ReadFile;
using testing::ReadOnlyMode;
using testing::ReadWriteMode;
using testing::TempFolder;
using testing::WithoutId;

// A raw SQLite handle, for building files as an older Lathe left them.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK) << path;
  }
  ~RawDb() { sqlite3_close(db_); }
  void Exec(const std::string& sql) {
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error),
              SQLITE_OK)
        << (error ? error : "") << " in " << sql;
    sqlite3_free(error);
  }
  int64_t Int(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr),
              SQLITE_OK)
        << sql;
    int64_t value = -1;
    if (stmt && sqlite3_step(stmt) == SQLITE_ROW)
      value = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return value;
  }
  sqlite3* raw() { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

// Stores `record` the way schema version 1 lays it out, by hand: the test
// must not lean on the code under test to write the old format.
void InsertVersion1Record(RawDb& db, const proto::Record& record) {
  const proto::TargetInfo& t = record.target();
  db.Exec(absl::StrCat("INSERT INTO workloads(key, canonical) VALUES('",
                       record.workload_key(), "', '", record.workload(), "')"));
  db.Exec(
      absl::StrCat("INSERT INTO targets(canonical, kind, cpu, features, "
                   "num_threads, device) "
                   "VALUES('",
                   t.canonical(), "', '", t.kind(), "', '", t.cpu(), "', '",
                   absl::StrJoin(t.features(), ","), "', ", t.num_threads(),
                   ", '", t.device(), "')"));
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(
      sqlite3_prepare_v2(
          db.raw(),
          "INSERT INTO records(workload_id, target_id, structural_hash, "
          "trace, times, median_s, spread, status, error, runner, "
          "lathe_version, measured_ms, job_id, fingerprint) "
          "VALUES(1, 1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, NULL, ?11)",
          -1, &stmt, nullptr),
      SQLITE_OK);
  const std::string trace = record.trace().SerializeAsString();
  proto::FloatList times;
  *times.mutable_values() = record.times_s();
  const std::string times_bytes = times.SerializeAsString();
  const std::string fingerprint = Fingerprint(record);
  sqlite3_bind_text(stmt, 1, record.structural_hash().c_str(), -1,
                    SQLITE_TRANSIENT);
  sqlite3_bind_blob(stmt, 2, trace.data(), static_cast<int>(trace.size()),
                    SQLITE_TRANSIENT);
  sqlite3_bind_blob(stmt, 3, times_bytes.data(),
                    static_cast<int>(times_bytes.size()), SQLITE_TRANSIENT);
  sqlite3_bind_double(stmt, 4, record.median_s());
  sqlite3_bind_double(stmt, 5, record.spread());
  sqlite3_bind_int(stmt, 6, record.status());
  sqlite3_bind_text(stmt, 7, record.error().c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(stmt, 8, record.runner().c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(stmt, 9, record.lathe_version().c_str(), -1,
                    SQLITE_TRANSIENT);
  sqlite3_bind_int64(stmt, 10, record.measured_at_unix_ms());
  sqlite3_bind_text(stmt, 11, fingerprint.c_str(), -1, SQLITE_TRANSIENT);
  EXPECT_EQ(sqlite3_step(stmt), SQLITE_DONE) << sqlite3_errmsg(db.raw());
  sqlite3_finalize(stmt);
}

// A file at schema version 1, as the first Lathe with a database wrote it,
// holding `record`.
void MakeVersion1File(const std::string& path, const proto::Record& record) {
  RawDb db(path);
  db.Exec(Migrations()[0]);
  db.Exec(absl::StrCat("PRAGMA application_id = ", kApplicationId,
                       "; PRAGMA user_version = 1"));
  InsertVersion1Record(db, record);
}

TEST(Schema, LatestVersionIsTheNumberOfMigrations) {
  ASSERT_GE(Migrations().size(), 2u);
  EXPECT_EQ(LatestSchemaVersion(), static_cast<int>(Migrations().size()));
  EXPECT_EQ(Database::CurrentSchemaVersion(), LatestSchemaVersion());
}

TEST(Schema, MigrateFromZeroBuildsTheLatestSchema) {
  TempFolder folder;
  const std::string path = folder.File("new.db");
  {
    absl::StatusOr<std::unique_ptr<Connection>> c =
        Connection::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    LATHE_ASSERT_OK(c.status());
    LATHE_ASSERT_OK(Migrate(**c, 0));
  }
  RawDb db(path);
  EXPECT_EQ(db.Int("PRAGMA user_version"), LatestSchemaVersion());
  EXPECT_EQ(db.Int("PRAGMA application_id"), kApplicationId);
  for (const char* table : {"workloads", "targets", "jobs", "records",
                            "cost_models", "best", "batches"}) {
    EXPECT_EQ(db.Int(absl::StrCat(
                  "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND "
                  "name = '",
                  table, "'")),
              1)
        << table;
  }
}

TEST(Schema, AFailedMigrationLeavesTheFileAtItsVersion) {
  TempFolder folder;
  const std::string path = folder.File("v1.db");
  {
    RawDb db(path);
    db.Exec(Migrations()[0]);
    db.Exec(absl::StrCat("PRAGMA application_id = ", kApplicationId,
                         "; PRAGMA user_version = 1"));
    // In the way of migration 1, which creates this table.
    db.Exec("CREATE TABLE cost_models(x)");
  }
  {
    absl::StatusOr<std::unique_ptr<Connection>> c =
        Connection::Open(path, SQLITE_OPEN_READWRITE);
    LATHE_ASSERT_OK(c.status());
    absl::Status migrated = Migrate(**c, 1);
    ASSERT_FALSE(migrated.ok());
    EXPECT_NE(migrated.message().find("from version 1 to 2"),
              absl::string_view::npos)
        << migrated;
    EXPECT_NE(migrated.message().find(path), absl::string_view::npos)
        << migrated;
  }
  RawDb db(path);
  // The version bump rolled back with the migration.
  EXPECT_EQ(db.Int("PRAGMA user_version"), 1);
}

TEST(Schema, ReadWriteOpenMigratesAVersion1FileAndKeepsItsRecords) {
  TempFolder folder;
  const std::string path = folder.File("v1.db");
  const proto::Record record =
      MakeRecord("w1", DefaultTarget(), "h1", {2e-3, 1e-3, 3e-3});
  MakeVersion1File(path, record);

  {
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, ReadWriteMode());
    LATHE_ASSERT_OK(db.status());
    absl::StatusOr<Stats> stats = (*db)->GetStats();
    LATHE_ASSERT_OK(stats.status());
    EXPECT_EQ(stats->schema_version, Database::CurrentSchemaVersion());
    EXPECT_EQ(stats->records, 1);

    absl::StatusOr<std::vector<proto::Record>> records =
        (*db)->RecordsOfTask("w1", record.target().canonical());
    LATHE_ASSERT_OK(records.status());
    ASSERT_EQ(records->size(), 1u);
    EXPECT_EQ(Bytes(WithoutId((*records)[0])), Bytes(record));

    // What version 2 added works on the migrated file.
    LATHE_ASSERT_OK(
        (*db)->PutCostModel(record.target(), "xgb", "model bytes", 1));
    absl::StatusOr<std::optional<std::string>> model =
        (*db)->GetCostModel(record.target().canonical(), "xgb");
    LATHE_ASSERT_OK(model.status());
    EXPECT_EQ(model->value_or(""), "model bytes");

    // What version 4 added too: batches, numbered per job.
    auto add = [&](const TuningBatch& batch) -> absl::StatusOr<int64_t> {
      absl::StatusOr<CommitResult> committed = (*db)->Commit({}, &batch);
      if (!committed.ok()) return committed.status();
      return committed->batch_index.value_or(-1);
    };
    TuningBatch batch;
    batch.job = "j1";
    batch.workload_key = "w1";
    batch.target = record.target().canonical();
    batch.trials = 8;
    batch.finished_ms = 1234;
    EXPECT_EQ(add(batch).value(), 0);
    batch.accuracy = 0.75;
    batch.trained_on = 8;
    EXPECT_EQ(add(batch).value(), 1);
    batch.job = "";
    EXPECT_EQ(add(batch).value(), 0);
    absl::StatusOr<std::vector<TuningBatch>> batches =
        (*db)->Batches("w1", record.target().canonical(), "j1");
    LATHE_ASSERT_OK(batches.status());
    ASSERT_EQ(batches->size(), 2u);
    EXPECT_FALSE((*batches)[0].accuracy.has_value());
    EXPECT_EQ((*batches)[0].finished_ms, 1234);
    EXPECT_EQ((*batches)[0].trials, 8);
    EXPECT_EQ((*batches)[1].index, 1);
    EXPECT_DOUBLE_EQ((*batches)[1].accuracy.value_or(0), 0.75);
    EXPECT_EQ((*batches)[1].trained_on, 8);
    EXPECT_EQ((*db)->Batches("w1", record.target().canonical())->size(), 3u);
    // A batch of a workload never committed is refused, naming it.
    batch.workload_key = "unknown";
    absl::StatusOr<int64_t> refused = add(batch);
    EXPECT_TRUE(absl::IsNotFound(refused.status())) << refused.status();
    EXPECT_NE(refused.status().message().find("unknown"),
              absl::string_view::npos);

    absl::StatusOr<CheckReport> check = (*db)->Check();
    LATHE_ASSERT_OK(check.status());
    EXPECT_TRUE(check->ok()) << absl::StrJoin(check->problems, "\n");
  }
  RawDb raw(path);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), LatestSchemaVersion());
  // Version 3's table best was filled from the records already there.
  EXPECT_EQ(raw.Int("SELECT COUNT(*) FROM best"), 1);
  EXPECT_EQ(raw.Int("SELECT COUNT(*) FROM batches"), 3);
}

TEST(Schema, ReadOnlyOpenNeverMigrates) {
  TempFolder folder;
  const std::string path = folder.File("v1.db");
  const proto::Record record =
      MakeRecord("w1", DefaultTarget(), "h1", {2e-3, 1e-3, 3e-3});
  MakeVersion1File(path, record);
  const std::string before = ReadFile(path);
  {
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, ReadOnlyMode());
    LATHE_ASSERT_OK(db.status());
    absl::StatusOr<Stats> stats = (*db)->GetStats();
    LATHE_ASSERT_OK(stats.status());
    EXPECT_EQ(stats->schema_version, 1);
    // Lookups that version 1 supports still answer.
    absl::StatusOr<std::optional<Match>> best =
        (*db)->Best("w1", record.target());
    LATHE_ASSERT_OK(best.status());
    ASSERT_TRUE(best->has_value());
    EXPECT_EQ(Bytes(WithoutId((*best)->record)), Bytes(record));
    // No table batches yet: none.
    absl::StatusOr<std::vector<TuningBatch>> batches =
        (*db)->Batches("w1", record.target().canonical());
    LATHE_ASSERT_OK(batches.status());
    EXPECT_TRUE(batches->empty());
  }
  EXPECT_EQ(ReadFile(path), before);
  EXPECT_FALSE(FileExists(path + "-wal"));
  RawDb raw(path);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), 1);
  EXPECT_EQ(
      raw.Int("SELECT COUNT(*) FROM sqlite_master WHERE name = 'cost_models'"),
      0);
}

TEST(Schema, ANewDatabaseIsCreatedAtTheLatestVersion) {
  TempFolder folder;
  const std::string path = folder.File("new.db");
  {
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, testing::CreateMode());
    LATHE_ASSERT_OK(db.status());
  }
  RawDb raw(path);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), LatestSchemaVersion());
  EXPECT_EQ(raw.Int("PRAGMA application_id"), kApplicationId);
}

}  // namespace
}  // namespace lathe::db
