#include "tuner/service/serve_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace lathe::service {

absl::StatusOr<std::unique_ptr<ServeLock>> ServeLock::Acquire(const std::string& db_path) {
  const std::string path = db_path + ".serve-lock";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": cannot create the daemon's lock: ", std::strerror(errno)));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    close(fd);
    if (error == EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat(
          db_path, ": another lathe serve runs on this database (it holds ", path,
          "); one daemon per database"));
    }
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": cannot lock: ", std::strerror(error)));
  }
  return std::unique_ptr<ServeLock>(new ServeLock(fd));
}

ServeLock::~ServeLock() { close(fd_); }  // the lock goes with it

}  // namespace lathe::service
