// One tuning process per database.
//
// A tuning process (a `lathe tune`, a `lathe serve` daemon) writes jobs and
// records as it measures. Two on one database did harm each time:
//  - two daemons resumed each other's jobs, measured them twice and
//    overwrote each other's job states (a job one finished, the other then
//    cancelled);
//  - two `lathe tune` runs measured the same programs twice (neither knows
//    the other's batch in flight) and, on one machine, timed their
//    candidates side by side, each disturbing the other's timings, which
//    are then stored as the programs' speed.
// So a tuning process holds an exclusive lock on "<database>.lock" (flock:
// released by the kernel when the process ends, however it ends) for as
// long as it runs; the file names its holder, so that a refused process can
// say who. The lock is a file of its own, never the database: closing any
// descriptor of the database would drop the POSIX locks SQLite holds on it.
// Readers (builds, `lathe db`) never take it. The lock file is opened
// without following a symbolic link and never truncated; a lock path that is
// a link, not a regular file, or a file with other names (hard links) is
// refused, naming it.
// Tests: tests/database/writer_lock_test.cc; the refusals the commands print
// in tests/tuner/service/daemon_test.cc and tests/cli/tune_commands_test.sh.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace lathe::db {

class WriterLock {
 public:
  // `holder` names this process in another's refusal ("lathe serve",
  // "lathe tune"). FailedPrecondition naming the database and the holder
  // when another process (or another lock of this one) holds it.
  static absl::StatusOr<std::unique_ptr<WriterLock>> Acquire(
      const std::string& db_path, absl::string_view holder);
  ~WriterLock();
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  explicit WriterLock(int fd) : fd_(fd) {}
  int fd_;
};

// The lock file of the database at `db_path`.
std::string WriterLockPath(const std::string& db_path);

}  // namespace lathe::db
