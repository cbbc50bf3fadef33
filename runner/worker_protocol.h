// The wire format between a LocalRunner and its worker process: frames of
// bytes, each a 4-byte little-endian length followed by that many bytes (a
// serialized MeasureRequest or MeasureResult). The conversation:
//   worker: kWorkerHello   (so the runner knows the program it started is a
//                           worker of this protocol before it hands it a
//                           candidate)
//   then, per candidate:
//   runner: MeasureRequest
//   worker: an empty frame (the acknowledgement: it has the request)
//   worker: MeasureResult
// The acknowledgement tells a worker that died before it read the request
// (killed between candidates) from one that died running it: only the
// latter is the candidate's fault.
// Tests: tests/runner/worker_protocol_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace lathe::runner {

// The first frame a worker writes; the number is the protocol's version.
inline constexpr absl::string_view kWorkerHello = "lathe-measure-worker 1";

// Frames above this are refused: a length that large is a corrupt stream.
inline constexpr uint32_t kMaxFrameBytes = uint32_t{256} << 20;

// The frame of `payload`: its length prefix and its bytes.
std::string EncodeFrame(absl::string_view payload);

// Writes one frame to `fd`, retrying short writes and EINTR.
// Errors: InvalidArgument for a payload over kMaxFrameBytes; Unavailable
// when the other end is gone (EPIPE and friends), with the errno text.
absl::Status WriteFrame(int fd, absl::string_view payload);

// Reads one frame from `fd`, blocking. nullopt when the stream ends cleanly
// before a frame. Errors: DataLoss for a stream that ends inside a frame or
// a length over kMaxFrameBytes; Unavailable for a read error.
absl::StatusOr<std::optional<std::string>> ReadFrame(int fd);

// Frames from a stream that arrives in pieces (the runner reads without
// blocking, under a deadline).
class FrameDecoder {
 public:
  void Append(const char* data, size_t size) { buffer_.append(data, size); }
  // The next whole frame, nullopt until one is complete. DataLoss for a
  // length over kMaxFrameBytes.
  absl::StatusOr<std::optional<std::string>> Next();
  // Bytes received that do not form a whole frame yet.
  size_t pending_bytes() const { return buffer_.size(); }

 private:
  std::string buffer_;
};

}  // namespace lathe::runner
