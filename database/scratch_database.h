// A database file of this process's own in a shared temporary folder (the
// records of a simulated tuning job, deleted at the job's end).
//
// Its path is not predictable: it lies in a new folder that mkdtemp names
// at random and creates (mode 0700) or fails, so nobody else can plant a
// file or a link at the database's path, or at the -wal, -shm and -journal
// paths SQLite puts beside it, nor read them. The folder and everything in
// it are removed when the ScratchDatabase goes (close the database first).
// Tests: tests/database/scratch_database_test.cc.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace lathe::db {

class ScratchDatabase {
 public:
  // A new folder "<parent>/<prefix>XXXXXX"; the database (not created yet)
  // is "records.db" in it. PermissionDenied naming `parent` when the folder
  // cannot be made.
  static absl::StatusOr<std::unique_ptr<ScratchDatabase>> Create(
      const std::string& parent, absl::string_view prefix);
  ~ScratchDatabase();
  ScratchDatabase(const ScratchDatabase&) = delete;
  ScratchDatabase& operator=(const ScratchDatabase&) = delete;

  const std::string& folder() const { return folder_; }
  const std::string& path() const { return path_; }

 private:
  explicit ScratchDatabase(std::string folder);
  std::string folder_;
  std::string path_;
};

}  // namespace lathe::db
