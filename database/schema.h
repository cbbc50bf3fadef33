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

// Each entry: the SQL that upgrades from version i to i + 1.
const std::vector<std::string>& Migrations();
inline int LatestSchemaVersion() { return static_cast<int>(Migrations().size()); }

// Brings a Lathe database at version `from` (0 for a new, empty file) to the
// latest version. The caller has checked that from <= LatestSchemaVersion().
absl::Status Migrate(Connection& connection, int from);

}  // namespace lathe::db
