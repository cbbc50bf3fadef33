// The database's schema, its version and its forward migrations.
//
// A Lathe database is a SQLite file whose application_id is kApplicationId
// and whose user_version is its schema version. Migration i (0-based) takes a
// file from version i to i + 1, in one transaction with the version bump, so
// a file is always at exactly one version. Never edit a released migration:
// append a new one.
// Tests: tests/database/schema_test.cc.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "database/sqlite_connection.h"

namespace lathe::db {

// "Lath" in ASCII.
inline constexpr int kApplicationId = 0x4c617468;

// The columns of table best, copied from records (version 3 on).
#define LATHE_DB_BEST_COLUMNS                                             \
  "workload_id, target_id, id, structural_hash, trace, times, median_s, " \
  "spread, status, error, "                                               \
  "runner, lathe_version, measured_ms, job_id"

// The ranking rule, in SQL: records of `r` that count, i.e. OK and the
// latest measurement of their program in their task. A program counts by its
// latest measurement: a re-measurement supersedes a lucky (or failed) earlier
// one. One probe of records_program per row.
#define LATHE_DB_COUNTING_RECORD                                         \
  "r.status = 1 AND r.id = (SELECT MAX(l.id) FROM records l WHERE "      \
  "l.workload_id = "                                                     \
  "r.workload_id AND l.target_id = r.target_id AND l.structural_hash = " \
  "r.structural_hash)"

// Refills table best from records: each task's fastest counting record.
inline constexpr char kRebuildBestSql[] =
    "DELETE FROM best; INSERT INTO best(" LATHE_DB_BEST_COLUMNS
    ") SELECT " LATHE_DB_BEST_COLUMNS
    " FROM (SELECT r.*, ROW_NUMBER() OVER (PARTITION BY r.workload_id, "
    "r.target_id "
    "ORDER BY r.median_s, r.id) AS rank FROM records r "
    "WHERE " LATHE_DB_COUNTING_RECORD ") WHERE rank = 1;";

// Each entry: the SQL that upgrades from version i to i + 1.
const std::vector<std::string>& Migrations();
inline int LatestSchemaVersion() {
  return static_cast<int>(Migrations().size());
}

// Brings a Lathe database at version `from` (0 for a new, empty file) to the
// latest version. The caller has checked that from <= LatestSchemaVersion().
absl::Status Migrate(Connection& connection, int from);

}  // namespace lathe::db
