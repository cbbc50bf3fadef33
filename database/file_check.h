// What is at a database path, judged from the file's first 100 bytes before
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

#include <string>

#include "absl/status/statusor.h"

namespace lathe::db {

enum class FileState { kAbsent, kEmpty, kSqlite };

absl::StatusOr<FileState> InspectDatabaseFile(const std::string& path);

}  // namespace lathe::db
