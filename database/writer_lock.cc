#include "database/writer_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace lathe::db {
namespace {

// Who holds the lock, as its holder wrote it ("lathe tune (pid 123)"); empty
// when the file says nothing readable (a holder between its lock and its
// write).
std::string HolderOf(int fd) {
  char text[128];
  const ssize_t n = pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) return "";
  std::string holder(text, static_cast<size_t>(n));
  holder = holder.substr(0, holder.find('\n'));
  for (char c : holder) {
    if (!absl::ascii_isprint(static_cast<unsigned char>(c))) return "";
  }
  return holder;
}

}  // namespace

std::string WriterLockPath(const std::string& db_path) {
  return db_path + ".lock";
}

absl::StatusOr<std::unique_ptr<WriterLock>> WriterLock::Acquire(
    const std::string& db_path, absl::string_view holder) {
  const std::string path = WriterLockPath(db_path);
  // Never through a link, never blocking on a FIFO or a device: whoever
  // could plant a link there would have the holder's text written over
  // another file.
  const int fd = open(
      path.c_str(),
      O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
  if (fd < 0) {
    const int error = errno;
    if (error == ELOOP) {
      return absl::FailedPreconditionError(absl::StrCat(
          path,
          ": the database's lock is a symbolic link; refusing to follow it "
          "(remove it)"));
    }
    return absl::PermissionDeniedError(absl::StrCat(
        path, ": cannot create the database's lock: ", std::strerror(error)));
  }
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_nlink != 1) {
    const bool regular = S_ISREG(info.st_mode);
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": the database's lock is ",
        regular ? "a file with other names (hard links)" : "not a regular file",
        "; refusing to use it (remove it)"));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string other = HolderOf(fd);
    close(fd);
    if (error == EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat(
          db_path, ": another ", other.empty() ? "tuning process" : other,
          " runs on this database (it holds ", path,
          "); one tuning process per database"));
    }
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": cannot lock: ", std::strerror(error)));
  }
  // Who holds it, for the refusal of the next one, up to its newline (the
  // file is never truncated: what an earlier, longer holder left after it
  // is not read); a failed write only makes that refusal less specific.
  const std::string text = absl::StrCat(holder, " (pid ", getpid(), ")\n");
  [[maybe_unused]] const ssize_t written =
      pwrite(fd, text.data(), text.size(), 0);
  return std::unique_ptr<WriterLock>(new WriterLock(fd));
}

WriterLock::~WriterLock() { close(fd_); }  // the lock goes with it

}  // namespace lathe::db
