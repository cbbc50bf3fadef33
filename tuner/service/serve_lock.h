// One daemon per database.
//
// A daemon resumes every job its database marks running, and cancels,
// persists and finishes them as it goes. Two daemons on one database (a
// second `lathe serve --db` by mistake, on another port) resumed each
// other's jobs, measured them twice and overwrote each other's job states:
// a job one daemon finished, the other then cancelled. So a daemon holds an
// exclusive lock on "<database>.serve-lock" (flock: released by the kernel
// when the process ends, however it ends) for as long as it runs. The lock
// is a file of its own, never the database: closing any descriptor of the
// database would drop the POSIX locks SQLite holds on it.
// Tests: tests/tuner/service/daemon_test.cc.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace lathe::service {

class ServeLock {
 public:
  // FailedPrecondition naming the database when another process (or
  // another daemon of this one) holds it.
  static absl::StatusOr<std::unique_ptr<ServeLock>> Acquire(const std::string& db_path);
  ~ServeLock();
  ServeLock(const ServeLock&) = delete;
  ServeLock& operator=(const ServeLock&) = delete;

 private:
  explicit ServeLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace lathe::service
