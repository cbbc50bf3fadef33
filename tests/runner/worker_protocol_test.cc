// Tests of runner/worker_protocol.h over pipes.
#include "runner/worker_protocol.h"

#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace lathe::runner {
namespace {

class Pipe {
 public:
  Pipe() { EXPECT_EQ(pipe(fds_), 0); }
  ~Pipe() {
    CloseWrite();
    if (fds_[0] >= 0) close(fds_[0]);
  }
  int read_fd() const { return fds_[0]; }
  int write_fd() const { return fds_[1]; }
  void CloseWrite() {
    if (fds_[1] >= 0) close(fds_[1]);
    fds_[1] = -1;
  }
  void WriteRaw(const std::string& bytes) {
    ASSERT_EQ(write(fds_[1], bytes.data(), bytes.size()),
              static_cast<ssize_t>(bytes.size()));
  }

 private:
  int fds_[2] = {-1, -1};
};

TEST(WorkerProtocol, FramesRoundTripInOrderThenEndCleanly) {
  Pipe p;
  std::string binary("a\0b\xff", 4);  // payloads are bytes, zeros included
  ASSERT_TRUE(WriteFrame(p.write_fd(), "first").ok());
  ASSERT_TRUE(WriteFrame(p.write_fd(), "").ok());
  ASSERT_TRUE(WriteFrame(p.write_fd(), binary).ok());
  p.CloseWrite();
  for (const std::string& expected :
       {std::string("first"), std::string(), binary}) {
    absl::StatusOr<std::optional<std::string>> frame = ReadFrame(p.read_fd());
    ASSERT_TRUE(frame.ok()) << frame.status();
    ASSERT_TRUE(frame->has_value());
    EXPECT_EQ(**frame, expected);
  }
  absl::StatusOr<std::optional<std::string>> end = ReadFrame(p.read_fd());
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_FALSE(end->has_value());
}

TEST(WorkerProtocol, LengthIsFourBytesLittleEndian) {
  std::string frame = EncodeFrame(std::string(258, 'x'));
  ASSERT_EQ(frame.size(), 4u + 258u);
  EXPECT_EQ(frame.substr(0, 4), std::string("\x02\x01\x00\x00", 4));
}

TEST(WorkerProtocol, StreamEndingInsideAFrameIsDataLoss) {
  Pipe p;
  std::string frame = EncodeFrame("hello");
  p.WriteRaw(frame.substr(0, 6));  // the length and 2 of 5 bytes
  p.CloseWrite();
  absl::StatusOr<std::optional<std::string>> got = ReadFrame(p.read_fd());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(got.status().message().find("after 2 of a frame's 5 bytes"),
            std::string::npos)
      << got.status();
}

TEST(WorkerProtocol, StreamEndingInsideTheLengthIsDataLoss) {
  Pipe p;
  p.WriteRaw(std::string("\x05\x00", 2));
  p.CloseWrite();
  EXPECT_EQ(ReadFrame(p.read_fd()).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(WorkerProtocol, RefusesAnOversizedLength) {
  Pipe p;
  p.WriteRaw(std::string("\xff\xff\xff\xff", 4));
  absl::StatusOr<std::optional<std::string>> got = ReadFrame(p.read_fd());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(got.status().message().find("exceeds the limit"), std::string::npos)
      << got.status();
}

TEST(WorkerProtocol, WriteToAClosedPipeIsUnavailableNotSigpipe) {
  Pipe p;
  // Workers ignore SIGPIPE (RunMeasureWorker); so does this test.
  signal(SIGPIPE, SIG_IGN);
  close(p.read_fd());
  absl::Status st = WriteFrame(p.write_fd(), "x");
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable) << st;
}

TEST(FrameDecoder, AssemblesFramesFromArbitraryPieces) {
  std::string stream =
      EncodeFrame("one") + EncodeFrame("") + EncodeFrame("three");
  FrameDecoder decoder;
  std::vector<std::string> frames;
  for (char c : stream) {  // one byte at a time: the worst split
    decoder.Append(&c, 1);
    for (;;) {
      absl::StatusOr<std::optional<std::string>> next = decoder.Next();
      ASSERT_TRUE(next.ok()) << next.status();
      if (!next->has_value()) break;
      frames.push_back(**next);
    }
  }
  EXPECT_EQ(frames, (std::vector<std::string>{"one", "", "three"}));
  EXPECT_EQ(decoder.pending_bytes(), 0u);
}

TEST(FrameDecoder, RefusesAnOversizedLength) {
  FrameDecoder decoder;
  decoder.Append("\xff\xff\xff\x7f", 4);
  EXPECT_EQ(decoder.Next().status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace lathe::runner
