#include "runner/worker_protocol.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace lathe::runner {
namespace {

uint32_t DecodeLength(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint32_t{u[0]} | uint32_t{u[1]} << 8 | uint32_t{u[2]} << 16 |
         uint32_t{u[3]} << 24;
}

absl::Status TooLarge(uint64_t length) {
  return absl::DataLossError(absl::StrCat("measure protocol: frame of ", length,
                                          " bytes exceeds the limit of ",
                                          kMaxFrameBytes));
}

// Writes all of `data`. On a socket, send() with MSG_NOSIGNAL: a worker
// that died must not kill the tuner with SIGPIPE. Other descriptors (a pipe
// in a worker) rely on the process ignoring SIGPIPE.
absl::Status WriteAll(int fd, const char* data, size_t size) {
  struct stat st;
  const bool is_socket = fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
  while (size > 0) {
    ssize_t n =
        is_socket ? send(fd, data, size, MSG_NOSIGNAL) : write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat(
          "measure protocol: write failed: ", std::strerror(errno)));
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// Reads exactly `size` bytes; returns how many arrived before the end of
// the stream (fewer than size only at the end).
absl::StatusOr<size_t> ReadAll(int fd, char* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = read(fd, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat(
          "measure protocol: read failed: ", std::strerror(errno)));
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

}  // namespace

std::string EncodeFrame(absl::string_view payload) {
  const auto n = static_cast<uint32_t>(payload.size());
  std::string frame;
  frame.reserve(4 + payload.size());
  for (int i = 0; i < 4; ++i)
    frame.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  frame.append(payload.data(), payload.size());
  return frame;
}

absl::Status WriteFrame(int fd, absl::string_view payload) {
  if (payload.size() > kMaxFrameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("measure protocol: a message of ", payload.size(),
                     " bytes exceeds the limit of ", kMaxFrameBytes));
  }
  const std::string frame = EncodeFrame(payload);
  return WriteAll(fd, frame.data(), frame.size());
}

absl::StatusOr<std::optional<std::string>> ReadFrame(int fd) {
  char header[4];
  absl::StatusOr<size_t> got = ReadAll(fd, header, sizeof header);
  if (!got.ok()) return got.status();
  if (*got == 0) return std::nullopt;
  if (*got < sizeof header) {
    return absl::DataLossError(
        "measure protocol: the stream ended inside a frame's length");
  }
  const uint32_t length = DecodeLength(header);
  if (length > kMaxFrameBytes) return TooLarge(length);
  std::string payload(length, '\0');
  got = ReadAll(fd, payload.data(), length);
  if (!got.ok()) return got.status();
  if (*got < length) {
    return absl::DataLossError(
        absl::StrCat("measure protocol: the stream ended after ", *got,
                     " of a frame's ", length, " bytes"));
  }
  return payload;
}

absl::StatusOr<std::optional<std::string>> FrameDecoder::Next() {
  if (buffer_.size() < 4) return std::nullopt;
  const uint32_t length = DecodeLength(buffer_.data());
  if (length > kMaxFrameBytes) return TooLarge(length);
  if (buffer_.size() < 4 + size_t{length}) return std::nullopt;
  std::string payload = buffer_.substr(4, length);
  buffer_.erase(0, 4 + size_t{length});
  return payload;
}

}  // namespace lathe::runner
