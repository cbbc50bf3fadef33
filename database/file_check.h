// What is at a database path, judged from the file's first bytes before
// SQLite touches it: nothing, an empty file, or a whole SQLite file.
//
// Refused with DataLoss, naming the file: anything that does not start with
// SQLite's magic string, and a SQLite file shorter than its header says
// (truncated by a bad copy or a full disk). The truncation check is skipped
// while a non-empty write-ahead log sits beside the file, because a
// checkpoint interrupted by a kill may leave the file short with the missing
// pages safe in the log.
// Tests: tests/database/file_check_test.cc.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace lathe::db {

enum class FileState { kAbsent, kEmpty, kSqlite };

// What a SQLite file's first page says, so that a file can be refused
// without SQLite opening it: SQLite creates -wal and -shm files beside a
// WAL-mode database even to read it, and a read-only connection leaves them
// behind. Only `authoritative` when the write-ahead log has no frames (the
// newest first page may be in the log).
struct DatabaseFileHeader {
  bool authoritative = false;
  uint32_t application_id = 0;
  uint32_t user_version = 0;
  bool has_schema = false;  // sqlite_master has rows: tables, indexes
};

// Fills `header` (when given) for a kSqlite file.
absl::StatusOr<FileState> InspectDatabaseFile(
    const std::string& path, DatabaseFileHeader* header = nullptr);

}  // namespace lathe::db
