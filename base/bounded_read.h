// Reading files and lines whose size the reader does not control.
//
// A file named on the command line may be anything: /dev/zero, a FIFO, a
// 150 MB line. Each reader states the most it accepts and reads at most one
// byte more: a larger file is refused with an error naming the file, the
// limit and its name, after at most max_bytes + 1 bytes (never read to the
// end first). A FIFO without a writer reads as empty instead of blocking.
// Tests: tests/base/bounded_read_test.cc.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <istream>
#include <streambuf>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/untrusted_text.h"

namespace lathe {

// The whole of the file at `path` when it has at most `max_bytes` bytes.
// Errors name `what` ("trace file"), the path and, for a file too large,
// `limit_name` and the limit: NotFound when it cannot be opened,
// InvalidArgument for a directory or a file too large, DataLoss for a read
// error.
inline absl::StatusOr<std::string> ReadBoundedFile(
    const std::string& path, absl::string_view what, size_t max_bytes,
    absl::string_view limit_name) {
  const std::string named = absl::StrCat(what, " ", EscapedPrefix(path));
  // Non-blocking only to open: a FIFO without a writer opens at once.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return absl::NotFoundError(
        absl::StrCat(named, ": cannot be opened (", std::strerror(errno), ")"));
  }
  struct stat info;
  if (::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(named, " is a directory"));
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string text;
  char buffer[1 << 16];
  while (text.size() <= max_bytes) {
    const size_t want = std::min(sizeof(buffer), max_bytes + 1 - text.size());
    const ssize_t got = ::read(fd, buffer, want);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      return absl::DataLossError(
          absl::StrCat(named, ": read error (", std::strerror(error), ")"));
    }
    if (got == 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  if (text.size() > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        named, " has more than ", max_bytes, " bytes (", limit_name, ")"));
  }
  return text;
}

// Reads the next line of `in` into *line, without its '\n'. False at the
// end of the input (a last line without '\n' is still a line); an
// InvalidArgument naming `limit_name` when the line is longer than
// `max_bytes`, after reading at most max_bytes + 1 of its bytes.
inline absl::StatusOr<bool> ReadBoundedLine(std::istream& in, std::string* line,
                                            size_t max_bytes,
                                            absl::string_view limit_name) {
  line->clear();
  std::streambuf* buffer = in.rdbuf();
  if (buffer == nullptr || !in.good()) return false;
  bool any = false;
  while (true) {
    const int c = buffer->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      return any;
    }
    any = true;
    if (c == '\n') return true;
    if (line->size() == max_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a line of more than ", max_bytes, " bytes (", limit_name, ")"));
    }
    line->push_back(static_cast<char>(c));
  }
}

}  // namespace lathe
