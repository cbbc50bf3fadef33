#include "api/huge_page_buffer.h"

#include <cstdint>
#include <fstream>
#include <string>
#include <utility>

#include "gtest/gtest.h"

namespace lathe::api {
namespace {

// Whether the kernel would take the advice: transparent huge pages built in
// and not switched off.
bool HugePagesAvailable() {
  std::ifstream file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  if (!std::getline(file, modes)) return false;
  return modes.find("[never]") == std::string::npos;
}

TEST(HugePageBuffer, ALargeBlockIsAlignedToAHugePageZeroedAndWritable) {
  const size_t bytes = 3 * HugePageBuffer::kHugePageBytes + 12345;
  absl::StatusOr<HugePageBuffer> buffer = HugePageBuffer::Allocate(bytes);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  ASSERT_NE(buffer->data(), nullptr);
  EXPECT_EQ(buffer->size(), bytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) %
                HugePageBuffer::kHugePageBytes,
            0u);
  if (HugePagesAvailable()) {
    EXPECT_TRUE(buffer->advised());
  }
  for (size_t i = 0; i < bytes; i += 4093) {
    ASSERT_EQ(buffer->data()[i], 0) << "at " << i;
    buffer->data()[i] = static_cast<char>(i % 127 + 1);
  }
  buffer->data()[bytes - 1] = 7;
  for (size_t i = 0; i < bytes; i += 4093) {
    ASSERT_EQ(buffer->data()[i], static_cast<char>(i % 127 + 1));
  }
}

TEST(HugePageBuffer, ASmallBlockGetsOrdinaryPagesWithoutAdvice) {
  absl::StatusOr<HugePageBuffer> buffer = HugePageBuffer::Allocate(100);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  ASSERT_NE(buffer->data(), nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) % 4096, 0u);
  EXPECT_FALSE(buffer->advised());
  buffer->data()[99] = 1;
}

TEST(HugePageBuffer, ZeroBytesIsEmpty) {
  absl::StatusOr<HugePageBuffer> buffer = HugePageBuffer::Allocate(0);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  EXPECT_EQ(buffer->data(), nullptr);
  EXPECT_EQ(buffer->size(), 0u);
}

TEST(HugePageBuffer, AnImpossibleSizeIsResourceExhaustedNamingIt) {
  absl::StatusOr<HugePageBuffer> buffer =
      HugePageBuffer::Allocate(SIZE_MAX - 100);
  ASSERT_FALSE(buffer.ok());
  EXPECT_EQ(buffer.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(buffer.status().message().find(std::to_string(SIZE_MAX - 100)),
            std::string::npos)
      << buffer.status();
}

TEST(HugePageBuffer, MovingHandsTheBlockOver) {
  absl::StatusOr<HugePageBuffer> buffer =
      HugePageBuffer::Allocate(HugePageBuffer::kMinHugeBytes);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  char* data = buffer->data();
  data[0] = 42;
  HugePageBuffer moved = *std::move(buffer);
  EXPECT_EQ(moved.data(), data);
  EXPECT_EQ(moved.data()[0], 42);
  HugePageBuffer assigned;
  assigned = std::move(moved);
  EXPECT_EQ(moved.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(assigned.data(), data);
  EXPECT_EQ(assigned.size(), HugePageBuffer::kMinHugeBytes);
}

}  // namespace
}  // namespace lathe::api
