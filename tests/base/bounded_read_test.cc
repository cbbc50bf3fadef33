#include "base/bounded_read.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace lathe {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir ? dir : "/tmp", "/lathe_bounded_read_", ::getpid(),
                      "_", name);
}

TEST(ReadBoundedFile, ReadsAFileWithinTheLimit) {
  const std::string path = TempPath("small");
  std::ofstream(path) << "hello";
  absl::StatusOr<std::string> text =
      ReadBoundedFile(path, "test file", 5, "kMax");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "hello");
  std::remove(path.c_str());
}

TEST(ReadBoundedFile, RefusesALargerFileNamingTheLimit) {
  const std::string path = TempPath("large");
  std::ofstream(path) << "hello!";
  absl::Status status =
      ReadBoundedFile(path, "test file", 5, "kMaxTest").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("more than 5 bytes (kMaxTest)"),
            std::string::npos)
      << status;
  std::remove(path.c_str());
}

TEST(ReadBoundedFile, StopsReadingDevZeroAtTheLimit) {
  absl::Status status =
      ReadBoundedFile("/dev/zero", "token file", 4096, "kMaxTokenFileBytes")
          .status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("kMaxTokenFileBytes"), std::string::npos);
}

TEST(ReadBoundedFile, AFifoWithoutAWriterReadsAsEmpty) {
  const std::string path = TempPath("fifo");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  absl::StatusOr<std::string> text =
      ReadBoundedFile(path, "trace file", 10, "k");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "");
  std::remove(path.c_str());
}

TEST(ReadBoundedFile, RefusesDirectoriesAndMissingFiles) {
  EXPECT_EQ(ReadBoundedFile("/", "trace file", 10, "k").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ReadBoundedFile("/nonexistent/x", "trace file", 10, "k").status().code(),
      absl::StatusCode::kNotFound);
}

TEST(ReadBoundedLine, ReadsLinesAndRefusesALongOne) {
  std::istringstream in("ab\n\ncd\nefghij\nlast");
  std::string line;
  EXPECT_EQ(*ReadBoundedLine(in, &line, 4, "k"), true);
  EXPECT_EQ(line, "ab");
  EXPECT_EQ(*ReadBoundedLine(in, &line, 4, "k"), true);
  EXPECT_EQ(line, "");
  EXPECT_EQ(*ReadBoundedLine(in, &line, 4, "k"), true);
  EXPECT_EQ(line, "cd");
  absl::StatusOr<bool> long_line = ReadBoundedLine(in, &line, 4, "kMaxLine");
  ASSERT_FALSE(long_line.ok());
  EXPECT_NE(long_line.status().message().find("kMaxLine"), std::string::npos);
  std::istringstream tail("last");
  EXPECT_EQ(*ReadBoundedLine(tail, &line, 4, "k"), true);
  EXPECT_EQ(line, "last");
  EXPECT_EQ(*ReadBoundedLine(tail, &line, 4, "k"), false);
}

}  // namespace
}  // namespace lathe
